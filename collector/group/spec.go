package group

import (
	"encoding/json"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"github.com/edgebench/edgebench/wire"
)

// Spec is the work a run asked of the server: the request (method, URL,
// headers, body size), how many connections sent it, with or without
// keep-alive, the open-loop rate, the tool whose request it sent
// (edgebench ab sends HTTP/1.0), HTTP/2 and its streams per connection,
// TLS resumption and version, and whether another device loaded the
// server (a run across two devices, stored under the server's device).
// Runs of different specs are different experiments: compare never pools
// them. The duration, the
// number of requests, the timeout and the warm-up are not part of it
// (a longer run of the same work is the same experiment).
type Spec struct {
	Method      string   `json:"method"`
	URL         string   `json:"url"`
	Connections int      `json:"connections"`
	KeepAlive   *bool    `json:"keepalive,omitempty"`  // nil only in a comparison by keep-alive
	Rate        float64  `json:"rate,omitempty"`       // requests/s of an open loop; 0 for a closed loop
	BodyBytes   int64    `json:"body_bytes,omitempty"` // the request body's size (its bytes are not sent back)
	Headers     []string `json:"headers,omitempty"`    // "Name: value", names canonical, sorted
	Mode        string   `json:"mode,omitempty"`       // "ab" or "wrk": edgebench ab or wrk; empty for edgebench run
	Protocol    string   `json:"protocol,omitempty"`   // "h2" or "h2c"; empty for HTTP/1.x
	Streams     int      `json:"streams,omitempty"`    // HTTP/2: requests at once per connection
	NoTLSResume bool     `json:"no_tls_resume,omitempty"`
	TLSVersion  string   `json:"tls_version,omitempty"` // "1.2" or "1.3"; empty: the server's choice
	// TwoMachines: the load came from another device, whose machine
	// was not the server's (a result the collector joined, with a
	// Loader). Its figures are not those of a load on the server's own
	// machine, whose generator took the server's cores.
	TwoMachines bool `json:"two_machines,omitempty"`
}

// SpecOf is the Spec of a result's run spec.
func SpecOf(rs wire.RunSpec) Spec {
	ka := rs.KeepAlive
	s := Spec{Method: rs.Method, URL: rs.URL, Connections: rs.Connections, KeepAlive: &ka, Rate: rs.Rate, BodyBytes: rs.BodyBytes, Mode: rs.Mode,
		Protocol: rs.Protocol, Streams: rs.Streams, NoTLSResume: rs.NoTLSResume, TLSVersion: rs.TLSVersion}
	if s.Method == "" {
		s.Method = "GET"
	}
	for _, h := range rs.Headers {
		s.Headers = append(s.Headers, textproto.CanonicalMIMEHeaderKey(h.Name)+": "+h.Value)
	}
	sort.Strings(s.Headers)
	return s
}

// ResultSpec is the Spec of a result: its run spec's, and whether
// another device loaded it (Result.Loader).
func ResultSpec(r *wire.Result) Spec {
	s := SpecOf(r.Spec)
	s.TwoMachines = r.Loader != nil
	return s
}

// String is the spec on one line, for example
// "GET http://127.0.0.1/ · 10 connections · keep-alive". Parts a
// comparison groups by are empty and left out.
func (s Spec) String() string {
	var parts []string
	if req := strings.TrimSpace(s.Method + " " + s.URL); req != "" {
		parts = append(parts, req)
	}
	if s.Connections > 0 {
		c := strconv.Itoa(s.Connections) + " connections"
		if s.Connections == 1 {
			c = "1 connection"
		}
		parts = append(parts, c)
	}
	if s.KeepAlive != nil {
		parts = append(parts, s.keepAlive())
	}
	if s.Rate > 0 {
		parts = append(parts, "open loop "+s.rate())
	}
	if s.BodyBytes > 0 {
		parts = append(parts, "body "+strconv.FormatInt(s.BodyBytes, 10)+" B")
	}
	for _, h := range s.Headers {
		parts = append(parts, "-H '"+h+"'")
	}
	if s.Mode != "" {
		parts = append(parts, "edgebench "+s.Mode)
	}
	if s.Protocol != "" {
		parts = append(parts, s.protocol())
	}
	if s.NoTLSResume {
		parts = append(parts, "no TLS resumption")
	}
	if s.TLSVersion != "" {
		parts = append(parts, "TLS "+s.TLSVersion)
	}
	if s.TwoMachines {
		parts = append(parts, "loaded from another device")
	}
	return strings.Join(parts, " · ")
}

// protocol is the HTTP version and, for HTTP/2, its streams per
// connection: "HTTP/1.x", "h2, 10 streams".
func (s Spec) protocol() string {
	switch {
	case s.Protocol == "":
		return "HTTP/1.x"
	case s.Streams == 1:
		return s.Protocol + ", 1 stream"
	}
	return s.Protocol + ", " + strconv.Itoa(s.Streams) + " streams"
}

// https reports whether the spec's URL is an https one.
func (s Spec) https() bool { return len(s.URL) >= 6 && strings.EqualFold(s.URL[:6], "https:") }

func (s Spec) keepAlive() string {
	switch {
	case s.KeepAlive == nil:
		return ""
	case *s.KeepAlive:
		return "keep-alive"
	}
	return "no keep-alive"
}

func (s Spec) rate() string {
	if s.Rate <= 0 {
		return "closed loop"
	}
	return strconv.FormatFloat(s.Rate, 'f', -1, 64) + " req/s"
}

// specFields are the keys of the spec's parts compare can group by: a
// comparison by one of them compares runs that differ in it and in
// nothing else of their spec.
var specFields = []string{"url", "method", "connections", "keepalive", "rate", "body_bytes", "mode", "protocol", "tls_resume", "tls_version",
	"machines"}

// IsSpecField reports whether k names a part of the spec.
func IsSpecField(k string) bool {
	for _, f := range specFields {
		if f == k {
			return true
		}
	}
	return false
}

// Field is the value of the spec's part k as a group key.
func (s Spec) Field(k string) (string, bool) {
	switch k {
	case "url":
		return s.URL, true
	case "method":
		return s.Method, true
	case "connections":
		return strconv.Itoa(s.Connections), true
	case "keepalive":
		return s.keepAlive(), true
	case "rate":
		return s.rate(), true
	case "body_bytes":
		return strconv.FormatInt(s.BodyBytes, 10), true
	case "mode":
		if s.Mode == "" {
			return "run", true
		}
		return s.Mode, true
	case "protocol":
		return s.protocol(), true
	case "tls_resume":
		switch {
		case !s.https():
			return "no TLS", true
		case s.NoTLSResume:
			return "resumption off", true
		}
		return "resumption on", true
	case "tls_version":
		switch {
		case !s.https():
			return "no TLS", true
		case s.TLSVersion == "":
			return "TLS 1.2 or 1.3", true
		}
		return "TLS " + s.TLSVersion, true
	case "machines":
		if s.TwoMachines {
			return "two devices", true
		}
		return "one device", true
	}
	return "", false
}

// Without is s with the part k left out (zero), for a comparison by k.
func (s Spec) Without(k string) Spec {
	switch k {
	case "url":
		s.URL = ""
	case "method":
		s.Method = ""
	case "connections":
		s.Connections = 0
	case "keepalive":
		s.KeepAlive = nil
	case "rate":
		s.Rate = 0
	case "body_bytes":
		s.BodyBytes = 0
	case "mode":
		s.Mode = ""
	case "protocol":
		s.Protocol, s.Streams = "", 0
	case "tls_resume":
		s.NoTLSResume = false
	case "tls_version":
		s.TLSVersion = ""
	case "machines":
		s.TwoMachines = false
	}
	return s
}

// Key identifies the spec: equal keys, equal work.
func (s Spec) Key() string {
	b, _ := json.Marshal(s) // strings, numbers and bools: cannot fail
	return string(b)
}
