package service

import (
	"context"
	"errors"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/hdwallet"
)

// Store crypto keys (issue 12; docs/crypto-keys.md): per store and coin, the
// merchant's account-level extended public key, from which each live quote
// takes a fresh address. checkoutd never holds a private key.

// CryptoKeySet is a key as set, with the address of its first index, which
// the merchant compares with the first receiving address their wallet shows
// before taking payments.
type CryptoKeySet struct {
	Key          *checkout.CryptoKey
	FirstAddress string
}

// SetCryptoKey validates raw, an extended public key or wpkh descriptor of
// coin on network (main, test or regtest: the chain of the operator's node
// for the coin), and makes it the store's key for the coin. Setting a key
// set before resumes its index, so no address is handed out twice. A
// private key is refused without being repeated.
func (s *Service) SetCryptoKey(ctx context.Context, merchantID, coin, network, raw string) (*CryptoKeySet, error) {
	if err := s.authorize(ctx, merchantID, checkout.ActionManageSettings); err != nil {
		return nil, err
	}
	coin = strings.ToUpper(strings.TrimSpace(coin))
	if coin == "SOL" {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Solana is offered in test mode only, through the simulator; live Solana payments are not supported yet.")
	}
	if _, ok := checkout.CoinByCode(coin); !ok || coin != hdwallet.BTC && coin != hdwallet.LTC && coin != hdwallet.ETH {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Coin must be BTC, LTC or ETH, not %q.", coin)
	}
	net, err := hdwallet.ParseNetwork(network)
	if err != nil {
		return nil, checkout.Errorf(checkout.EValidationFailed, "Network must be main, test or regtest (the chain of the coin's node), not %q.", network)
	}
	acct, err := hdwallet.ParseAccount(coin, net, strings.TrimSpace(raw))
	if err != nil {
		return nil, err
	}
	first, err := acct.Address(0)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.MerchantGet(ctx, merchantID); err != nil {
		return nil, err
	}
	now := s.now()
	key := strings.TrimSpace(raw)
	k := &checkout.CryptoKey{
		ID: checkout.CryptoKeyID(merchantID, coin, string(net), key), MerchantID: merchantID, Coin: coin, Network: string(net),
		Key: key, Fingerprint: acct.Fingerprint(), Active: true, CreatedAt: now, UpdatedAt: now,
	}
	err = s.inTx(ctx, func(tx *txn) error {
		if err := tx.MerchantLock(ctx, merchantID); err != nil {
			return err
		}
		if k, err = tx.CryptoKeySet(ctx, k); err != nil {
			return err
		}
		return s.Record(ctx, tx, merchantID, checkout.AuditCryptoKeySet, coin)
	})
	if err != nil {
		return nil, err
	}
	return &CryptoKeySet{Key: k, FirstAddress: first.Address}, nil
}

// CryptoKeys returns a store's keys, by coin.
func (s *Service) CryptoKeys(ctx context.Context, merchantID string) ([]*checkout.CryptoKey, error) {
	if err := s.authorize(ctx, merchantID, checkout.ActionViewSettings); err != nil {
		return nil, err
	}
	if _, err := s.store.MerchantGet(ctx, merchantID); err != nil {
		return nil, err
	}
	return s.store.CryptoKeyList(ctx, merchantID)
}

// RemoveCryptoKey stops live quotes of a coin for a store. The key stays,
// inactive, with its index: set again, it resumes where it was.
func (s *Service) RemoveCryptoKey(ctx context.Context, merchantID, coin string) error {
	if err := s.authorize(ctx, merchantID, checkout.ActionManageSettings); err != nil {
		return err
	}
	coin = strings.ToUpper(strings.TrimSpace(coin))
	return s.inTx(ctx, func(tx *txn) error {
		if err := tx.CryptoKeyRemove(ctx, merchantID, coin, s.now()); err != nil {
			return err
		}
		return s.Record(ctx, tx, merchantID, checkout.AuditCryptoKeyRemove, coin)
	})
}

// takeAddress derives the next unused address of a store's key for a coin,
// in tx: the index is taken under the key's lock, so no two quotes ever get
// one address. An index BIP 32 has no key for (once in 2^127) is skipped.
func takeAddress(ctx context.Context, tx *txn, merchantID, coin string) (*checkout.CryptoKey, hdwallet.Address, error) {
	for {
		k, err := tx.CryptoKeyTake(ctx, merchantID, coin)
		if err != nil {
			return nil, hdwallet.Address{}, err
		}
		net, err := hdwallet.ParseNetwork(k.Network)
		if err != nil {
			return nil, hdwallet.Address{}, checkout.Internal(err)
		}
		acct, err := hdwallet.ParseAccount(k.Coin, net, k.Key)
		if err != nil {
			return nil, hdwallet.Address{}, checkout.Internal(err)
		}
		if k.NextIndex > int64(hdwallet.MaxIndex) {
			return nil, hdwallet.Address{}, checkout.Errorf(checkout.EValidationFailed, "The %s key of store %s has handed out every address it has; set a new account's key.", coin, merchantID)
		}
		a, err := acct.Address(uint32(k.NextIndex))
		if err == nil {
			return k, a, nil
		}
		if !isIndexGap(err) {
			return nil, hdwallet.Address{}, err
		}
	}
}

func isIndexGap(err error) bool { return errors.Is(err, hdwallet.ErrIndex) }
