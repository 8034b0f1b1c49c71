package main

import (
	"testing"

	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

func storetestPostgresURL(t *testing.T) string { return storetest.PostgresURL(t) }
