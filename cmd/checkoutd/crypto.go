package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/chain/ethereum"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
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
	fs.StringVar(&c.rates, "crypto-rates", "", "the price of one coin in a currency, for live quotes: LTC/USD=85.12,BTC/USD=97000,...")
	fs.DurationVar(&c.scanInterval, "crypto-scan-interval", 5*time.Second, "how often the live crypto nodes are scanned for payments")
}

// enabled reports whether any live coin is configured.
func (c *cryptoFlags) enabled() bool { return c.btc.url != "" || c.ltc.url != "" || c.ethURL != "" }

// check validates the flags.
func (c *cryptoFlags) check() error {
	if !c.enabled() {
		return nil
	}
	if c.rates == "" {
		return usageError{"live crypto needs --crypto-rates: the price of each coin taken in each currency stores sell in, such as LTC/USD=85.12"}
	}
	if _, err := parsePrices(c.rates); err != nil {
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
	prices, err := parsePrices(c.rates)
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
	return livecrypto.New(prices, cursors, coins...)
}

// parsePrices reads --crypto-rates: COIN/CURRENCY=PRICE entries, the price
// of one coin in the currency, exact to the currency's minor unit.
func parsePrices(s string) (livecrypto.Prices, error) {
	p := livecrypto.Prices{}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		pair, price, ok := strings.Cut(entry, "=")
		coin, currency, ok2 := strings.Cut(pair, "/")
		if !ok || !ok2 {
			return nil, usageError{fmt.Sprintf("--crypto-rates: %q is not COIN/CURRENCY=PRICE, such as LTC/USD=85.12", entry)}
		}
		coin, currency = strings.ToUpper(strings.TrimSpace(coin)), strings.ToUpper(strings.TrimSpace(currency))
		if _, ok := checkout.CoinByCode(coin); !ok {
			return nil, usageError{fmt.Sprintf("--crypto-rates: %q: unknown coin %s", entry, coin)}
		}
		code, ok := checkout.NormalizeCurrency(currency)
		if !ok {
			return nil, usageError{fmt.Sprintf("--crypto-rates: %q: unknown currency %s", entry, currency)}
		}
		minor, err := minorUnits(strings.TrimSpace(price), checkout.CurrencyExponent(code))
		if err != nil || minor <= 0 {
			return nil, usageError{fmt.Sprintf("--crypto-rates: %q: the price must be a positive amount of %s with at most %d decimals", entry, code, checkout.CurrencyExponent(code))}
		}
		if _, dup := p[coin+"/"+code]; dup {
			return nil, usageError{fmt.Sprintf("--crypto-rates: %s/%s is given twice", coin, code)}
		}
		p[coin+"/"+code] = minor
	}
	return p, nil
}

// minorUnits reads a decimal amount exactly, in minor units of a currency
// of exponent exp.
func minorUnits(s string, exp int) (int64, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "eE/") {
		return 0, fmt.Errorf("not a decimal")
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("not exact")
	}
	return r.Num().Int64(), nil
}
