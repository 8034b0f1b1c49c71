package client

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The package is what merchants import: outside its tests it uses the
// standard library alone, nothing of checkoutd's (checkout/, internal/)
// and no other module, so that depending on it brings in nothing else.
func TestImportsStandardLibraryOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s; the client imports the standard library only", f, path)
			}
		}
	}
	if n == 0 {
		t.Error("no non-test files found")
	}
}

// The module is what merchants require: its go.mod requires nothing, so
// that go get of it adds this module alone to a merchant's go.mod and
// nothing to their go.sum. A require of the server's module would also make
// go get fail (it would need the server's go.mod, with its replace of this
// module), and a replace or exclude here would be ignored by the merchant's
// build, and so would only make this module's tests differ from theirs.
func TestModuleRequiresNothing(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := false
	for i, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "//") {
			continue
		}
		switch f[0] {
		case "module":
			module = len(f) == 2 && f[1] == "github.com/checkoutd/checkoutd/client"
		case "go", "toolchain":
		default:
			t.Errorf("go.mod:%d: %s; the client's go.mod has a module and a go line only", i+1, line)
		}
	}
	if !module {
		t.Errorf("go.mod does not say module github.com/checkoutd/checkoutd/client:\n%s", mod)
	}
	if _, err := os.Stat("go.sum"); err == nil {
		t.Error("there is a go.sum; want none (no module to check the sums of)")
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Error(err)
	}
}
