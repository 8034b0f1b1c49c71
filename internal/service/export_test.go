package service

// The black-box tests (package service_test) log into the same buffer as
// the package's own.
type SyncBuffer = syncBuffer

var TestLogger = testLogger
