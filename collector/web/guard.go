package web

// This file guards the web UI and its API: the Host header (against DNS
// rebinding) and the API token.

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/edgebench/edgebench/wire"
)

// LoopbackAddr reports whether host:port names a loopback address.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ValidWebHost checks a name given for Config.WebHosts: a host name
// without scheme, port or path.
func ValidWebHost(name string) error {
	if name == "" || strings.ContainsAny(name, ":/[]@ ") {
		return fmt.Errorf("web host %q: want a host name such as bench.example.org, without scheme, port or path", name)
	}
	return nil
}

// AllowHosts passes to h the requests whose Host header is an IP address,
// localhost, the host of the listen address or one of names, and answers
// 421 to the others. A page whose owner points its DNS name at 127.0.0.1
// (DNS rebinding) reaches the collector as the same origin, but with its
// own name as Host.
func AllowHosts(listen string, names []string, h http.Handler) http.Handler {
	ok := map[string]bool{"localhost": true}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		ok[strings.ToLower(host)] = true
	}
	for _, n := range names {
		ok[strings.TrimSuffix(strings.ToLower(n), ".")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if host == "" || ok[host] || net.ParseIP(strings.Trim(host, "[]")) != nil {
			h.ServeHTTP(w, r)
			return
		}
		host = wire.Clip(host)
		http.Error(w, fmt.Sprintf("misdirected request: this collector does not answer to the name %q "+
			"(start it with --web-host %s if that name is its own)", host, host), http.StatusMisdirectedRequest)
	})
}

// RequireToken passes requests that carry "Authorization: Bearer token"
// to h, and answers 401 to the others; with no token it is h.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="edgebench"`)
			http.Error(w, "unauthorized: this collector's API needs its token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
