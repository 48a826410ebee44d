// Package tlsflags is the HTTPS and HTTP/2 flags of the commands that
// start a load test: edgebench run, ab and wrk on a device, and
// edgebench-collector trigger for a fleet. One set of flags, one set of
// rules, one line for each mistake. It holds the options in a type of its
// own, so the collector's binary does not link the load generator.
package tlsflags

import (
	"os"
	"strings"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// Options are a load test's HTTPS and HTTP/2 options.
type Options struct {
	HTTPS    bool   // the URL is https; the TLS options are zero when not
	CACerts  []byte // PEM, from --cacert
	Insecure bool
	NoResume bool
	Version  uint16 // crypto/tls's VersionTLS12 or 13; 0 is the server's choice
	HTTP2    bool   // --h2 or --h2c
	Streams  int    // per connection, at least 1
}

// Flags are the HTTPS and HTTP/2 flags of a load test command.
type Flags struct {
	o       Options
	cacert  string
	version string
	h2, h2c bool
}

// Add adds the TLS options every load test command takes (long names
// only: -k is keep-alive) to fs, and, with h2, HTTP/2's. def gives the
// defaults of --insecure and --no-tls-resume (ab and wrk verify nothing).
func Add(fs *cli.FlagSet, def Options, h2 bool) *Flags {
	tf := &Flags{o: def}
	fs.StringVar(&tf.cacert, "cacert", "", "https: verify the server's certificate against the CAs of this PEM `FILE`")
	fs.BoolVar(&tf.o.Insecure, "insecure", def.Insecure, "https: do not verify the server's certificate")
	fs.BoolVar(&tf.o.NoResume, "no-tls-resume", def.NoResume, "https: a full TLS handshake for each new connection (no session resumption)")
	fs.StringVar(&tf.version, "tls-version", "", "https: speak this TLS version only, `1.2 or 1.3` (default: the server's choice)")
	if h2 {
		fs.BoolVar(&tf.h2, "h2", false, "HTTP/2 over TLS, negotiated by ALPN (an https:// URL)")
		fs.BoolVar(&tf.h2c, "h2c", false, "HTTP/2 in cleartext, prior knowledge (an http:// URL)")
		fs.IntVar(&tf.o.Streams, "streams", 1, "HTTP/2: concurrent streams (requests in flight) per connection, as h2load's -m")
		fs.IntVar(&tf.o.Streams, "max-concurrent-streams", 1, "the same as --streams (h2load's name)")
	}
	return tf
}

// Apply checks the options against the URL and keep-alive and returns
// them: the TLS options are zero for an http URL. Mistakes are cli usage
// errors.
func (tf *Flags) Apply(url string, keepAlive bool, fs *cli.FlagSet) (Options, error) {
	o := tf.o
	https := strings.HasPrefix(strings.ToLower(url), "https://")
	o.HTTPS = https
	if o.Streams == 0 {
		o.Streams = 1
	}
	switch {
	case tf.cacert != "" && fs.Changed("insecure") && o.Insecure:
		return o, cli.Usagef("--cacert and --insecure: one or the other (--cacert verifies the certificate, --insecure does not)")
	case tf.h2 && tf.h2c:
		return o, cli.Usagef("--h2 and --h2c: one or the other (--h2 over TLS, --h2c in cleartext)")
	case tf.h2 && !https:
		return o, cli.Usagef("--h2 is HTTP/2 over TLS: give an https:// URL (--h2c is HTTP/2 in cleartext)")
	case tf.h2c && https:
		return o, cli.Usagef("--h2c is HTTP/2 in cleartext: give an http:// URL (--h2 is HTTP/2 over TLS)")
	case (tf.h2 || tf.h2c) && !keepAlive:
		return o, cli.Usagef("--no-keepalive with HTTP/2: an HTTP/2 connection carries many requests (leave out --h2 for one request per connection)")
	case o.Streams < 1 || o.Streams > wire.MaxStreams:
		return o, cli.Usagef("--streams %d: want 1..%d", o.Streams, wire.MaxStreams)
	case o.Streams > 1 && !tf.h2 && !tf.h2c:
		return o, cli.Usagef("--streams %d: concurrent streams are HTTP/2's: add --h2 (https) or --h2c (http)", o.Streams)
	}
	o.HTTP2 = tf.h2 || tf.h2c
	if !https && (tf.cacert != "" || tf.version != "" || fs.Changed("insecure")) {
		return o, cli.Usagef("--cacert, --insecure and --tls-version are for https:// URLs")
	}
	v, err := report.ParseTLSVersion(tf.version)
	if err != nil {
		return o, cli.Usagef("--tls-version %q: want 1.2 or 1.3", tf.version)
	}
	o.Version = v
	if !https {
		o.CACerts, o.Insecure, o.NoResume, o.Version = nil, false, false, 0
	}
	if tf.cacert != "" {
		pem, err := os.ReadFile(tf.cacert)
		if err != nil {
			return o, cli.Usagef("--cacert: %v", err)
		}
		o.CACerts, o.Insecure = pem, false
	}
	return o, nil
}

// CACert is the --cacert file given, "" when none.
func (tf *Flags) CACert() string { return tf.cacert }
