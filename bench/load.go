package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// newClient returns a client that keeps one idle connection per worker, so
// that every worker stays on its keep-alive connection.
func newClient(concurrency int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // loopback, whatever HTTP_PROXY says
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        concurrency,
			MaxIdleConnsPerHost: concurrency,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		Timeout: time.Minute,
	}
}

// loadConfig is the shape of one row's load.
type loadConfig struct {
	concurrency int
	warmup      time.Duration
	duration    time.Duration
}

// result is what one row measured. A request counts when it started inside
// the measured window, after the warm-up.
type result struct {
	requests  int             // completed, failures included
	failures  int             // transport errors and non-2xx answers
	firstErr  string          // the first failure, to show what went wrong
	latencies []time.Duration // of every successful request, sorted
	bytes     int64           // response body bytes of the successful requests
	window    time.Duration
	// batch is checkoutd's mean shared batch during the row and its
	// warm-up: writes per shared transaction (group commit) for a create,
	// reads of sessions per shared statement (batched reads) for a
	// retrieve; 0 when none was shared or the target is not checkoutd.
	batch float64
}

// rps is successful requests per second.
func (r *result) rps() float64 { return float64(len(r.latencies)) / r.window.Seconds() }

// percentile returns the p-th percentile (0 < p <= 100) of the successful
// requests' latencies by the nearest-rank method: the smallest latency that
// at least p percent of them do not exceed. It is 0 when there is none.
func (r *result) percentile(p float64) time.Duration {
	n := len(r.latencies)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return r.latencies[min(max(rank, 1), n)-1]
}

// runLoad runs cfg.concurrency workers that send the requests newRequest
// makes (worker w's n-th) back to back, for the warm-up and then the
// measured window, and waits for the requests in flight at its end.
func runLoad(ctx context.Context, client *http.Client, cfg loadConfig, newRequest func(w, n int) (*http.Request, error)) (*result, error) {
	from := time.Now().Add(cfg.warmup)
	to := from.Add(cfg.duration)
	parts := make([]result, cfg.concurrency)
	errs := make([]error, cfg.concurrency)
	var wg sync.WaitGroup
	for w := range cfg.concurrency {
		wg.Go(func() {
			part := &parts[w]
			for n := 0; ctx.Err() == nil; n++ {
				req, err := newRequest(w, n)
				if err != nil {
					errs[w] = err
					return
				}
				start := time.Now()
				if !start.Before(to) {
					return
				}
				size, err := send(client, req)
				latency := time.Since(start)
				if start.Before(from) {
					continue // warm-up
				}
				part.requests++
				if err != nil {
					part.failures++
					if part.firstErr == "" {
						part.firstErr = err.Error()
					}
					continue
				}
				part.latencies = append(part.latencies, latency)
				part.bytes += size
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &result{window: cfg.duration}
	for w, part := range parts {
		if errs[w] != nil {
			return nil, errs[w]
		}
		res.requests += part.requests
		res.failures += part.failures
		res.bytes += part.bytes
		res.latencies = append(res.latencies, part.latencies...)
		if res.firstErr == "" {
			res.firstErr = part.firstErr
		}
	}
	slices.Sort(res.latencies)
	return res, nil
}

// send sends req and reads the whole response, returning the size of its
// body. A transport error or a status other than 2xx is an error.
func send(client *http.Client, req *http.Request) (int64, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return 0, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, bytes.TrimSpace(body))
	}
	return io.Copy(io.Discard, resp.Body)
}

// createPool creates n sessions through t's API, with up to concurrency
// requests at a time, and returns their ids.
func createPool(ctx context.Context, client *http.Client, t *target, n, concurrency int) ([]string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, concurrency) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				id, err := createOne(ctx, client, t)
				if err != nil {
					cancel(err)
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	return ids, context.Cause(ctx)
}

func createOne(ctx context.Context, client *http.Client, t *target) (string, error) {
	req, err := t.createRequest(ctx)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	id := t.sessionID(body)
	if resp.StatusCode != t.created || id == "" {
		return "", fmt.Errorf("POST %s: %s: %.300s", req.URL.Path, resp.Status, body)
	}
	return id, nil
}
