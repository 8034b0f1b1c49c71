//go:build !unix

package sqlite

// lockToServe locks nothing where flock does not exist: the store then
// caches no session (OpenToServe).
func lockToServe(string) (unlock func() error, locked bool, err error) {
	return func() error { return nil }, false, nil
}
