package report

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Target is the parsed URL of a test.
type Target struct {
	URL    string `json:"url"`
	Scheme string `json:"-"`
	Host   string `json:"host"` // as in the URL, without port
	Port   int    `json:"port"`
	Path   string `json:"path"` // request target: path and query
}

// ParseTarget checks and splits an http or https URL: the URL of a load test, which
// loadgen.Run checks with it. A URL without a scheme
// ("127.0.0.1:8080/", "localhost/x") gets the http:// it probably lacks
// suggested.
func ParseTarget(raw string) (Target, error) {
	if !strings.Contains(raw, "://") && raw != "" && !strings.HasPrefix(raw, "/") {
		if _, err := ParseTarget("http://" + raw); err == nil {
			return Target{}, fmt.Errorf("URL %q has no scheme: did you mean \"http://%s\"?", raw, raw)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("URL %q: %v", raw, err)
	}
	port := 80
	switch u.Scheme {
	case "http":
	case "https":
		port = 443
	default:
		return Target{}, fmt.Errorf("URL %q: want http://host[:port]/path or https://", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return Target{}, fmt.Errorf("URL %q: no host", raw)
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("URL %q: user info is not supported (use -H 'Authorization: ...')", raw)
	}
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return Target{}, fmt.Errorf("URL %q: bad port %q", raw, p)
		}
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return Target{URL: raw, Scheme: u.Scheme, Host: u.Hostname(), Port: port, Path: path}, nil
}

// Header is one request header of a load test.
type Header struct{ Name, Value string }

// ParseHeader parses "Name: value" as given to -H: the rule of
// loadgen.Run, and of the collector's trigger for the devices it asks.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return Header{}, fmt.Errorf("header %q: want 'Name: value'", s)
	}
	return Header{Name: name, Value: strings.TrimSpace(value)}, nil
}
