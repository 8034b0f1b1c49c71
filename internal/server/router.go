package server

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/web"
)

// router is http.ServeMux with answers of our own for what it does not
// serve: unknown paths get 404 not_found and known paths with another method
// get 405 method_not_allowed with an Allow header, both in the envelope.
type router struct {
	mux     *http.ServeMux
	methods map[string]map[string]http.Handler // path pattern → method → handler
}

func newRouter() *router {
	r := &router{mux: http.NewServeMux(), methods: map[string]map[string]http.Handler{}}
	r.mux.Handle("/", http.HandlerFunc(notFound))
	return r
}

// handle registers h for a "METHOD /path" pattern.
func (r *router) handle(pattern string, h http.Handler) {
	method, p, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("route pattern needs a method: " + pattern)
	}
	byMethod, seen := r.methods[p]
	if !seen {
		byMethod = map[string]http.Handler{}
		r.methods[p] = byMethod
		r.mux.Handle(p, methodSwitch(p, byMethod))
	}
	byMethod[method] = h
	if method == http.MethodGet {
		// As http.ServeMux does: a GET route answers HEAD (the server sends
		// the headers alone), which load balancers' health checks use.
		byMethod[http.MethodHead] = h
	}
}

func (r *router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	// ServeMux would answer an unclean path (//v1, /v1/../x) with a
	// redirect; such paths name nothing here. A trailing slash is clean
	// (/dashboard/ is the dashboard's home).
	if p := req.URL.Path; p == "" || p[0] != '/' || (p != "/" && path.Clean(p) != strings.TrimSuffix(p, "/")) {
		notFound(w, req)
		return
	}
	r.mux.ServeHTTP(w, req)
}

// methodSwitch serves the path pattern p by method, and notes p as the
// request's route for metrics, whatever the method.
func methodSwitch(p string, byMethod map[string]http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noteRoute(r, p)
		if h, ok := byMethod[r.Method]; ok {
			h.ServeHTTP(w, r)
			return
		}
		allow := make([]string, 0, len(byMethod))
		for m := range byMethod {
			allow = append(allow, m)
		}
		slices.Sort(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		web.WriteError(w, r, checkout.Errorf(checkout.EMethodNotAllowed,
			"%s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, strings.Join(allow, ", ")))
	})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	web.WriteError(w, r, checkout.Errorf(checkout.ENotFound, "There is nothing at %s %s.", r.Method, r.URL.EscapedPath()))
}
