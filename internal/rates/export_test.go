package rates

// Waiting returns how many callers wait for the request in flight for a
// pair: 0 when none is.
func (t *Ticker) Waiting(coin, currency string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.pairs[pair{coin, currency}]
	if e == nil || e.call == nil {
		return 0
	}
	return e.call.waiters
}
