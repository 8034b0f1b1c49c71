package checkout

// Scope is a store and a mode: what a dashboard page shows and changes. The
// service's scoped functions answer not_found, as for an id that does not
// exist, when an object belongs to another store or mode, so that an id
// edited in a URL never reaches another store's data.
type Scope struct {
	MerchantID string
	Mode       Mode
}
