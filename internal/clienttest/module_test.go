package clienttest_test

import (
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The client's module is a module of its own (client/go.mod), which ./...
// of the server's module does not reach: this test runs its tests, with the
// go command running this one, offline (it needs the standard library
// alone), so that the README's one test command, go test ./..., tests both
// modules. It reads every file of the client's module first, so that go
// test's cache of this test's result is dropped when one of them changes.
func TestClientModule(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "client"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.New()
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		sum.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	cmd := exec.Command(goBin, "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOWORK=off", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go test ./... in the client's module (%s): %v\n%s", dir, err, out.String())
	}
	if !strings.Contains(out.String(), "ok  \tgithub.com/checkoutd/checkoutd/client") {
		t.Errorf("go test ./... in the client's module printed no ok for the client:\n%s", out.String())
	}
	t.Logf("the client's module (files %x):\n%s", sum.Sum(nil)[:8], out.String())
}
