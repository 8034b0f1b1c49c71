package store_test

import (
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// TestConformance runs the conformance suite on every database.
func TestConformance(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			storetest.Exercise(t, func(t *testing.T) *store.DB { return storetest.Open(t, name) })
		})
	}
}
