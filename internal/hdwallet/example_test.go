package hdwallet_test

import (
	"errors"
	"fmt"

	"github.com/checkoutd/checkoutd/internal/hdwallet"
)

// A store's Bitcoin key (BIP 84's test wallet) and its first receiving
// addresses, one per payment.
func ExampleParseAccount() {
	const zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	account, err := hdwallet.ParseAccount(hdwallet.BTC, hdwallet.Mainnet, zpub)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range uint32(2) {
		addr, err := account.Address(i)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(addr.Index, addr.Address, addr.Descriptor)
	}
	// Output:
	// 0 bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu wpkh(0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c)#3chvf9zl
	// 1 bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g wpkh(03e775fd51f0dfb8cd865d9ff1cca2a158cf651fe997fdc9fee9c1d3b5e995ea77)#08eah9h9
}

// A private key pasted by mistake is refused, and the error does not
// repeat it.
func ExampleParseAccount_privateKey() {
	const xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
	_, err := hdwallet.ParseAccount(hdwallet.BTC, hdwallet.Mainnet, xprv)
	fmt.Println(errors.Is(err, hdwallet.ErrPrivateKey))
	fmt.Println(err)
	// Output:
	// true
	// validation_failed: This is a private key (xprv): give the extended public key (xpub) instead. checkoutd never needs a private key; anyone who has this one can spend the wallet's funds, so keep it secret.: hdwallet: private key given
}
