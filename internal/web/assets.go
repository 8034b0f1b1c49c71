package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"
)

// Assets are the static files of a set of pages (style sheets, scripts,
// images), each with a version that changes with its content: pages link to
// name?v=version, which is cached for good, so a new release is fetched
// again and an old one never is.
type Assets map[string]asset

type asset struct {
	body        []byte
	contentType string
	version     string // the first hex of the body's SHA-256
}

// assetTypes are the content types of the files assets may hold.
var assetTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

// LoadAssets reads every file of dir in fsys. A file of a type it does not
// know panics: assets are embedded, so that is a mistake of the build.
func LoadAssets(fsys fs.FS, dir string) Assets {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		panic(err)
	}
	out := Assets{}
	for _, e := range entries {
		ct, ok := assetTypes[path.Ext(e.Name())]
		if !ok {
			panic("web: an asset of an unknown type: " + e.Name())
		}
		b, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = asset{body: b, contentType: ct, version: hex.EncodeToString(sum[:6])}
	}
	return out
}

// URL is the versioned path of the asset name under prefix.
func (as Assets) URL(prefix, name string) string { return prefix + name + "?v=" + as[name].version }

// Handler serves GET prefix{name}: an unknown name is a 404; the current
// version is cached for good, any other only after revalidation.
func (as Assets) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		a, ok := as[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.URL.Query().Get("v") == a.version {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}
