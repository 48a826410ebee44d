package web

// This file bounds what a request to the web port may cost: the headers
// every answer carries, the tokens of the pages whose cost grows with
// the stored history, and how many of them run at once.

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// SecurityHeaders sets on every answer of h, pages, API, /metrics and
// errors alike, what a browser needs to keep a device's text inert: a
// Content Security Policy that runs no script but the collector's own
// files (none inline), takes no form elsewhere and lets no other site
// frame the pages (their buttons), and nosniff, so that a device's text
// served as text is never run as HTML or a script.
func SecurityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		h.ServeHTTP(w, r)
	})
}

// ContentSecurityPolicy is the policy of every answer.
const ContentSecurityPolicy = "default-src 'self'; style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
}

// tokenOK reports whether r carries one of tokens: as a bearer token, or
// (basic) as the password of HTTP Basic authentication, whatever the
// user name. Each is compared in constant time.
func tokenOK(r *http.Request, tokens []string, basic bool) bool {
	got, isBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !isBearer {
		if !basic {
			return false
		}
		var ok bool
		if _, got, ok = r.BasicAuth(); !ok {
			return false
		}
	}
	match := 0
	for _, t := range tokens {
		match |= subtle.ConstantTimeCompare([]byte(got), []byte(t))
	}
	return match == 1
}

// RequirePageToken passes to h the requests that carry token, as
// RequireToken does, or as the password of HTTP Basic authentication
// (any user name), which a browser asks for when it is answered 401; it
// answers 401 to the others. With no token it is h. Only pages take
// Basic: a browser sends the credentials it keeps with every request to
// the site, and the API's are never taken from it.
func RequirePageToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tokenOK(r, []string{token}, true) {
			w.Header().Set("WWW-Authenticate", `Basic realm="edgebench", charset="UTF-8"`)
			http.Error(w, "unauthorized: this page needs the collector API's token (as the password, any user name)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// RequireMetricsToken passes to h the scrapes that carry a bearer token
// (Prometheus' authorization: credentials or credentials_file): token,
// else apiToken, which may read everything; it answers 401 to the others.
// With neither it is h.
func RequireMetricsToken(token, apiToken string, h http.Handler) http.Handler {
	var tokens []string
	for _, t := range []string{token, apiToken} {
		if t != "" {
			tokens = append(tokens, t)
		}
	}
	if len(tokens) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tokenOK(r, tokens, false) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="edgebench"`)
			http.Error(w, "unauthorized: /metrics needs the collector's metrics token (or its API token) as a bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Limiter bounds the requests of a kind running at once: past its
// places, a request is answered at once 503 Service Unavailable with
// Retry-After, and costs nothing more.
type Limiter struct {
	what  string
	slots chan struct{}
}

// RetryAfter is the Retry-After, in seconds, of a request a Limiter
// turns away.
const RetryAfter = 2

// NewLimiter is a limiter of n places (at least 1) for what (a few words
// for the 503's message: "expensive pages").
func NewLimiter(what string, n int) *Limiter {
	return &Limiter{what: what, slots: make(chan struct{}, max(n, 1))}
}

// Wrap passes requests to h while the limiter has a place for them.
func (l *Limiter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case l.slots <- struct{}{}:
		default:
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
			http.Error(w, fmt.Sprintf("busy: %d requests for %s already run; try again in %d s", cap(l.slots), l.what, RetryAfter),
				http.StatusServiceUnavailable)
			return
		}
		defer func() { <-l.slots }()
		h.ServeHTTP(w, r)
	})
}
