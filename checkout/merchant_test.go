package checkout_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

func TestNewMerchant(t *testing.T) {
	tests := []struct {
		name string
		p    checkout.MerchantParams
		want checkout.Merchant // ID and CreatedAt are checked apart
	}{
		{"minimal", checkout.MerchantParams{Name: "Acme Games", Currency: "usd"},
			checkout.Merchant{Name: "Acme Games", Currency: "USD", StatementDescriptor: "ACME GAMES"}},
		{"every field", checkout.MerchantParams{Name: " Acme ", Currency: "EUR", Website: "https://acme.example", StatementDescriptor: " ACME GAMES "},
			checkout.Merchant{Name: "Acme", Currency: "EUR", Website: "https://acme.example", StatementDescriptor: "ACME GAMES"}},
		{"descriptor from a long name, cut to 22", checkout.MerchantParams{Name: "The Very Long Name Of A Games Shop", Currency: "JPY"},
			checkout.Merchant{Name: "The Very Long Name Of A Games Shop", Currency: "JPY", StatementDescriptor: "THE VERY LONG NAME OF"}},
		{"descriptor drops what card networks refuse", checkout.MerchantParams{Name: `Joe's <Best> "Shop"*`, Currency: "GBP"},
			checkout.Merchant{Name: `Joe's <Best> "Shop"*`, Currency: "GBP", StatementDescriptor: "JOES BEST SHOP"}},
		{"descriptor drops non-ASCII", checkout.MerchantParams{Name: "Ünïcode Shop", Currency: "CHF"},
			checkout.Merchant{Name: "Ünïcode Shop", Currency: "CHF", StatementDescriptor: "NCODE SHOP"}},
		{"descriptor padded to 5", checkout.MerchantParams{Name: "Al", Currency: "USD"},
			checkout.Merchant{Name: "Al", Currency: "USD", StatementDescriptor: "AL..."}},
		{"descriptor of a name without ASCII", checkout.MerchantParams{Name: "日本の店", Currency: "JPY"},
			checkout.Merchant{Name: "日本の店", Currency: "JPY", StatementDescriptor: "....."}},
		{"name 128 runes", checkout.MerchantParams{Name: strings.Repeat("é", 128), Currency: "USD"},
			checkout.Merchant{Name: strings.Repeat("é", 128), Currency: "USD", StatementDescriptor: "....."}},
		{"descriptor 5", checkout.MerchantParams{Name: "A", Currency: "USD", StatementDescriptor: "ABCDE"},
			checkout.Merchant{Name: "A", Currency: "USD", StatementDescriptor: "ABCDE"}},
		{"descriptor 22", checkout.MerchantParams{Name: "A", Currency: "USD", StatementDescriptor: strings.Repeat("D", 22)},
			checkout.Merchant{Name: "A", Currency: "USD", StatementDescriptor: strings.Repeat("D", 22)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkout.NewMerchant(tt.p, t0)
			if err != nil {
				t.Fatalf("NewMerchant(%+v) = %v", tt.p, err)
			}
			if !checkout.ValidStoreID(got.ID) {
				t.Errorf("NewMerchant: id %q is not a store id", got.ID)
			}
			if !got.CreatedAt.Equal(t0.Truncate(time.Second)) {
				t.Errorf("NewMerchant: CreatedAt = %v; want %v", got.CreatedAt, t0.Truncate(time.Second))
			}
			tt.want.ID, tt.want.CreatedAt = got.ID, got.CreatedAt
			if tt.want.Pricing == (checkout.Pricing{}) {
				tt.want.Pricing = checkout.DefaultPricing
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("NewMerchant(%+v) = %+v; want %+v", tt.p, *got, tt.want)
			}
		})
	}
}

func TestNewMerchantInvalid(t *testing.T) {
	tests := []struct {
		name     string
		p        checkout.MerchantParams
		problems []string
	}{
		{"no name", checkout.MerchantParams{Currency: "USD"}, []string{"too_short name"}},
		{"blank name", checkout.MerchantParams{Name: "  ", Currency: "USD", StatementDescriptor: "ACME GAMES"}, []string{"too_short name"}},
		{"name 129 runes", checkout.MerchantParams{Name: strings.Repeat("é", 129), Currency: "USD"}, []string{"too_long name"}},
		{"name with a newline", checkout.MerchantParams{Name: "Acme\nGames", Currency: "USD"}, []string{"invalid_characters name"}},
		{"no currency", checkout.MerchantParams{Name: "Acme"}, []string{"invalid_currency currency"}},
		{"unknown currency", checkout.MerchantParams{Name: "Acme", Currency: "ABC"}, []string{"invalid_currency currency"}},
		{"website http", checkout.MerchantParams{Name: "Acme", Currency: "USD", Website: "http://acme.example"}, []string{"invalid_url website"}},
		{"website relative", checkout.MerchantParams{Name: "Acme", Currency: "USD", Website: "acme.example"}, []string{"invalid_url website"}},
		{"descriptor 4", checkout.MerchantParams{Name: "Acme", Currency: "USD", StatementDescriptor: "ABCD"}, []string{"out_of_range statement_descriptor"}},
		{"descriptor 23", checkout.MerchantParams{Name: "Acme", Currency: "USD", StatementDescriptor: strings.Repeat("D", 23)},
			[]string{"out_of_range statement_descriptor"}},
		{"descriptor with *", checkout.MerchantParams{Name: "Acme", Currency: "USD", StatementDescriptor: "ACME*GAMES"},
			[]string{"invalid_format statement_descriptor"}},
		{"descriptor not ASCII", checkout.MerchantParams{Name: "Acme", Currency: "USD", StatementDescriptor: "ÄCME GAMES"},
			[]string{"invalid_format statement_descriptor"}},
		{"everything wrong", checkout.MerchantParams{Currency: "dollars", Website: "ftp://x", StatementDescriptor: "x"},
			[]string{"too_short name", "invalid_currency currency", "invalid_url website", "out_of_range statement_descriptor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := checkout.NewMerchant(tt.p, t0)
			if err == nil {
				t.Fatalf("NewMerchant(%+v) = %+v; want an error", tt.p, m)
			}
			if !checkout.IsCode(err, checkout.EValidationFailed) {
				t.Errorf("NewMerchant(%+v) code = %s; want validation_failed", tt.p, checkout.ErrorCode(err))
			}
			if got := problems(err); !reflect.DeepEqual(got, tt.problems) {
				t.Errorf("NewMerchant(%+v) problems = %q; want %q", tt.p, got, tt.problems)
			}
		})
	}
}
