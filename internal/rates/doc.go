// Package rates prices coins in the currencies of checkout sessions: how
// many base units of a coin (satoshi, litoshi, wei, lamports) a buyer pays
// for an amount in minor units of a currency.
//
// A Source gives the Rate of a pair: the price of one whole coin in minor
// units of the currency, as an exact decimal (Price), with the time it was
// observed and the source's name. Two sources are provided: Fixed, the
// operator's rates from configuration (ParseFixed), and Ticker, Coinbase's
// public spot price endpoint with a per-pair cache. Chain asks several in
// turn. CoinAmount converts with exact integer arithmetic, rounding up so
// the merchant is never paid short.
//
// A quote made at a rate holds for QuoteValidity (ExpiresAt, Valid): an
// expired quote is made again at a fresh rate, never honoured at the old
// one, and a payment first seen after its quote expired is judged against
// a fresh quote made at that moment.
//
// No float ever holds a price or an amount here: prices are parsed from
// decimal strings digit by digit into big integers. Each Source enforces
// its own staleness rule (Ticker's MaxAge; Fixed rates do not age), so a
// rate a Source returns may be used as is.
//
// The package knows nothing of sessions, stores or HTTP handlers;
// docs/rates.md is the operator's guide.
package rates
