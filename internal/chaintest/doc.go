// Package chaintest starts real blockchain nodes for tests: Litecoin Core
// in regtest (StartLitecoin) and ganache, a local Ethereum chain
// (StartGanache). Each node gets free loopback ports and a temporary
// directory, runs in a process group of its own, and is stopped when the
// test ends (t.Cleanup).
//
// The helpers drive the node the way a buyer and the network would: fund a
// wallet, send to an address, mine blocks, invalidate a block to make a
// reorganisation, bump a fee to replace a transaction, double-spend, stop
// and restart the node on the same data directory. They talk to the node
// through a JSON-RPC client of their own, so a test never relies on the
// code under test to set the scene.
//
// Waits poll a condition with a deadline (the node answering its RPC, a
// process exiting); nothing sleeps for a fixed time.
//
// Without the node's program the tests skip with a message saying how to
// install it (.ci/install-chains installs both), unless
// CHECKOUTD_TEST_REQUIRE_CHAINS=1, which makes them fail. The programs are
// litecoind on PATH (or CHECKOUTD_TEST_LITECOIND) and ganache on PATH, in
// $HOME/.cache/checkoutd/ganache/node_modules/.bin (where
// .ci/install-chains puts it without root), or CHECKOUTD_TEST_GANACHE.
package chaintest
