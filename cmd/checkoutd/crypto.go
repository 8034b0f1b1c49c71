package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/chain/ethereum"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/rates"
)

// Live crypto (docs/payments.md, Live crypto): serve takes real crypto
// payments in live mode for each coin whose node it is given.

// nodeFlags configure one Bitcoin Core or Litecoin Core node.
type nodeFlags struct {
	url, user, password, wallet, network string
	confirmations                        int
}

// cryptoFlags are serve's live crypto flags.
type cryptoFlags struct {
	btc, ltc         nodeFlags
	ethURL           string
	ethConfirmations int
	rates            string
	ratesURL         string
	ratesTTL         time.Duration
	ratesMaxAge      time.Duration
	scanInterval     time.Duration
}

func (c *cryptoFlags) register(fs *flag.FlagSet) {
	for _, n := range []struct {
		code string
		f    *nodeFlags
		port string
	}{{"btc", &c.btc, "8332"}, {"ltc", &c.ltc, "9332"}} {
		coin, _ := checkout.CoinByCode(n.code)
		fs.StringVar(&n.f.url, n.code+"-rpc-url", "", fmt.Sprintf("%s Core's JSON-RPC address, such as http://127.0.0.1:%s: live sessions take %s when set", coin.Name, n.port, coin.Code))
		fs.StringVar(&n.f.user, n.code+"-rpc-user", "", fmt.Sprintf("the %s node's RPC user", coin.Name))
		fs.StringVar(&n.f.password, n.code+"-rpc-password", "", fmt.Sprintf("the %s node's RPC password; better given as CHECKOUTD_%s_RPC_PASSWORD", coin.Name, strings.ToUpper(n.code)))
		fs.StringVar(&n.f.wallet, n.code+"-wallet", "checkoutd", fmt.Sprintf("the watch-only wallet checkoutd keeps on the %s node (created when missing)", coin.Name))
		fs.StringVar(&n.f.network, n.code+"-network", "main", fmt.Sprintf("the %s node's chain: main, test or regtest (stores' keys must be for it)", coin.Name))
		fs.IntVar(&n.f.confirmations, n.code+"-confirmations", coin.Confirmations, fmt.Sprintf("confirmations a %s payment needs", coin.Code))
	}
	eth, _ := checkout.CoinByCode("ETH")
	fs.StringVar(&c.ethURL, "eth-rpc-url", "", "an Ethereum node's JSON-RPC address (geth, Nethermind, a provider): live sessions take ETH when set")
	fs.IntVar(&c.ethConfirmations, "eth-confirmations", eth.Confirmations, "confirmations an ETH payment needs")
	fs.StringVar(&c.rates, "crypto-rates", "", "fixed prices of one coin in a currency, for live quotes: LTC/USD=85.12,BTC/USD=97000,... (docs/rates.md)")
	fs.StringVar(&c.ratesURL, "crypto-rates-url", "", "a Coinbase-compatible ticker for the pairs --crypto-rates does not fix, such as "+rates.DefaultTickerURL+" (off when empty: no outbound call)")
	fs.DurationVar(&c.ratesTTL, "crypto-rates-ttl", rates.DefaultTTL, "how long a ticker rate is used before it is asked for again")
	fs.DurationVar(&c.ratesMaxAge, "crypto-rates-max-age", rates.DefaultMaxAge, "the oldest a ticker rate may be when the ticker cannot renew it; past it, quotes in that pair fail")
	fs.DurationVar(&c.scanInterval, "crypto-scan-interval", 5*time.Second, "how often the live crypto nodes are scanned for payments")
}

// enabled reports whether any live coin is configured.
func (c *cryptoFlags) enabled() bool { return c.btc.url != "" || c.ltc.url != "" || c.ethURL != "" }

// check validates the flags.
func (c *cryptoFlags) check() error {
	if !c.enabled() {
		return nil
	}
	if _, err := c.source(); err != nil {
		return err
	}
	for code, n := range map[string]*nodeFlags{"btc": &c.btc, "ltc": &c.ltc} {
		if n.url == "" {
			continue
		}
		if n.confirmations < 1 || n.confirmations > 100 {
			return usageError{fmt.Sprintf("--%s-confirmations must be 1 to 100", code)}
		}
		switch n.network {
		case "main", "test", "regtest":
		default:
			return usageError{fmt.Sprintf("--%s-network must be main, test or regtest, not %q", code, n.network)}
		}
	}
	if c.ethURL != "" && (c.ethConfirmations < 1 || c.ethConfirmations > 100) {
		return usageError{"--eth-confirmations must be 1 to 100"}
	}
	if c.scanInterval <= 0 {
		return usageError{"--crypto-scan-interval must be positive"}
	}
	return nil
}

// network builds the live crypto network, or returns nil when no coin is
// configured. A node that does not answer now is logged, not fatal: card
// payments go on, and its coin's payments wait for it.
func (c *cryptoFlags) network(ctx context.Context, log *slog.Logger, cursors livecrypto.Cursors) (*livecrypto.Network, error) {
	if !c.enabled() {
		return nil, nil
	}
	src, err := c.source()
	if err != nil {
		return nil, err
	}
	var coins []livecrypto.Coin
	for _, n := range []struct {
		code string
		f    nodeFlags
	}{{"BTC", c.btc}, {"LTC", c.ltc}} {
		if n.f.url == "" {
			continue
		}
		node, err := bitcoind.New(bitcoind.Config{URL: n.f.url, User: n.f.user, Password: n.f.password, Wallet: n.f.wallet})
		if err != nil {
			return nil, usageError{fmt.Sprintf("--%s-rpc-url: %v", strings.ToLower(n.code), err)}
		}
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		if err := node.EnsureWallet(wctx); err != nil {
			log.Error("live crypto node not ready: its payments wait for it", "coin", n.code, "err", err)
		} else {
			log.Info("live crypto node ready", "coin", n.code, "network", n.f.network, "confirmations", n.f.confirmations)
		}
		cancel()
		coins = append(coins, livecrypto.Coin{Code: n.code, Node: node, Network: n.f.network, Depth: n.f.confirmations})
	}
	if c.ethURL != "" {
		node, err := ethereum.New(ethereum.Config{URL: c.ethURL})
		if err != nil {
			return nil, usageError{fmt.Sprintf("--eth-rpc-url: %v", err)}
		}
		coins = append(coins, livecrypto.Coin{Code: "ETH", Node: node, Network: "main", Depth: c.ethConfirmations, StartCursor: ethereum.Cursor})
		log.Info("live crypto node configured", "coin", "ETH", "confirmations", c.ethConfirmations)
	}
	return livecrypto.New(livecrypto.SourceRates{Source: src}, cursors, coins...)
}

// source is the rate source of live quotes: the fixed rates first, then
// the ticker; at least one is needed.
func (c *cryptoFlags) source() (rates.Source, error) {
	var chain rates.Chain
	if c.rates != "" {
		f, err := rates.ParseFixed(c.rates, time.Now())
		if err != nil {
			return nil, usageError{"--crypto-rates: " + err.Error()}
		}
		chain = append(chain, f)
	}
	if c.ratesURL != "" {
		t, err := rates.NewTicker(rates.TickerConfig{BaseURL: c.ratesURL, TTL: c.ratesTTL, MaxAge: c.ratesMaxAge})
		if err != nil {
			return nil, usageError{"--crypto-rates-url: " + err.Error()}
		}
		chain = append(chain, t)
	}
	if len(chain) == 0 {
		return nil, usageError{"live crypto needs prices: --crypto-rates (fixed, such as LTC/USD=85.12) or --crypto-rates-url (a ticker), or both"}
	}
	return chain, nil
}
