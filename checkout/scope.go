package checkout

// Scope is the store and mode a dashboard page works in: every service
// function the dashboard calls with an id takes one, and answers not_found,
// as for an id that does not exist, when the object belongs to another store
// or another mode, so an id edited in a URL reveals nothing.
type Scope struct {
	MerchantID string
	Mode       Mode
}
