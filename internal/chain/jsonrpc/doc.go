// Package jsonrpc is the JSON-RPC 2.0 client over HTTP that the chain
// adapters share: Bitcoin Core and Litecoin Core (HTTP basic
// authentication) and Ethereum nodes (credentials, if any, in the URL, as
// providers put an API key in the path).
//
// Errors never carry the credentials: they name the node by scheme and
// host only, never by the full URL, and never repeat the user or password.
// Results keep numbers exact (json.Decoder.UseNumber), for amounts must
// never pass through a float64.
package jsonrpc
