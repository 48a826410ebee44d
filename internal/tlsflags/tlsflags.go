// Package tlsflags is the HTTPS and HTTP/2 flags of the commands that
// start a load test: edgebench run, ab and wrk on a device, and
// edgebench-collector trigger for a fleet. One set of flags, one set of
// rules, one line for each mistake.
package tlsflags

import (
	"os"
	"strings"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen"
)

// Flags are the HTTPS and HTTP/2 options of a load test command.
type Flags struct {
	cacert  string
	version string
	h2, h2c bool
}

// Add adds the TLS options every load test command takes (long names
// only: -k is keep-alive) to fs, and, with h2, HTTP/2's; they set c.
func Add(fs *cli.FlagSet, c *loadgen.Config, h2 bool) *Flags {
	tf := &Flags{}
	fs.StringVar(&tf.cacert, "cacert", "", "https: verify the server's certificate against the CAs of this PEM `FILE`")
	fs.BoolVar(&c.TLS.Insecure, "insecure", c.TLS.Insecure, "https: do not verify the server's certificate")
	fs.BoolVar(&c.TLS.NoResume, "no-tls-resume", c.TLS.NoResume, "https: a full TLS handshake for each new connection (no session resumption)")
	fs.StringVar(&tf.version, "tls-version", "", "https: speak this TLS version only, `1.2 or 1.3` (default: the server's choice)")
	if h2 {
		fs.BoolVar(&tf.h2, "h2", false, "HTTP/2 over TLS, negotiated by ALPN (an https:// URL)")
		fs.BoolVar(&tf.h2c, "h2c", false, "HTTP/2 in cleartext, prior knowledge (an http:// URL)")
		fs.IntVar(&c.Streams, "streams", 1, "HTTP/2: concurrent streams (requests in flight) per connection, as h2load's -m")
		fs.IntVar(&c.Streams, "max-concurrent-streams", 1, "the same as --streams (h2load's name)")
	}
	return tf
}

// Apply checks the options against c's URL and keep-alive and sets them
// in c: HTTP2, Streams (at least 1) and TLS (zero for an http URL).
// Mistakes are cli usage errors.
func (tf *Flags) Apply(c *loadgen.Config, fs *cli.FlagSet) error {
	https := strings.HasPrefix(strings.ToLower(c.URL), "https://")
	if c.Streams == 0 {
		c.Streams = 1
	}
	switch {
	case tf.cacert != "" && fs.Changed("insecure") && c.TLS.Insecure:
		return cli.Usagef("--cacert and --insecure: one or the other (--cacert verifies the certificate, --insecure does not)")
	case tf.h2 && tf.h2c:
		return cli.Usagef("--h2 and --h2c: one or the other (--h2 over TLS, --h2c in cleartext)")
	case tf.h2 && !https:
		return cli.Usagef("--h2 is HTTP/2 over TLS: give an https:// URL (--h2c is HTTP/2 in cleartext)")
	case tf.h2c && https:
		return cli.Usagef("--h2c is HTTP/2 in cleartext: give an http:// URL (--h2 is HTTP/2 over TLS)")
	case (tf.h2 || tf.h2c) && !c.KeepAlive:
		return cli.Usagef("--no-keepalive with HTTP/2: an HTTP/2 connection carries many requests (leave out --h2 for one request per connection)")
	case c.Streams < 1 || c.Streams > loadgen.MaxStreams:
		return cli.Usagef("--streams %d: want 1..%d", c.Streams, loadgen.MaxStreams)
	case c.Streams > 1 && !tf.h2 && !tf.h2c:
		return cli.Usagef("--streams %d: concurrent streams are HTTP/2's: add --h2 (https) or --h2c (http)", c.Streams)
	}
	c.HTTP2 = tf.h2 || tf.h2c
	if !https && (tf.cacert != "" || tf.version != "" || fs.Changed("insecure")) {
		return cli.Usagef("--cacert, --insecure and --tls-version are for https:// URLs")
	}
	v, err := loadgen.ParseTLSVersion(tf.version)
	if err != nil {
		return cli.Usagef("--tls-version %q: want 1.2 or 1.3", tf.version)
	}
	c.TLS.Version = v
	if !https {
		c.TLS = loadgen.TLSConfig{}
	}
	if tf.cacert != "" {
		pem, err := os.ReadFile(tf.cacert)
		if err != nil {
			return cli.Usagef("--cacert: %v", err)
		}
		c.TLS.CACerts, c.TLS.Insecure = pem, false
	}
	return nil
}

// CACert is the --cacert file given, "" when none.
func (tf *Flags) CACert() string { return tf.cacert }
