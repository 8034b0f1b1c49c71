package postgres

// Writable is the pool's check of a connection it hands out again.
var Writable = writable
