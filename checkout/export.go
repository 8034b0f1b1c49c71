package checkout

import "time"

// ExportParams asks for a page of a store's sessions or payments of one
// mode created From (included) to To (excluded), oldest first, after the
// cursor After (the last row of the page before; zero for the first
// page), at most Limit.
type ExportParams struct {
	MerchantID string
	Mode       Mode
	From, To   time.Time
	After      Cursor
	Limit      int
}

// ExportPayment is a payment as the export reads it: with its dispute's
// status, "" when it has none.
type ExportPayment struct {
	*Payment
	DisputeStatus DisputeStatus
}
