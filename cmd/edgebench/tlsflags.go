package main

import (
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/tlsflags"
	"github.com/edgebench/edgebench/loadgen"
)

// addTLSFlags adds the HTTPS (and, with h2, HTTP/2) flags to fs; c's
// TLS options are their defaults.
func addTLSFlags(fs *cli.FlagSet, c *loadgen.Config, h2 bool) *tlsflags.Flags {
	return tlsflags.Add(fs, tlsflags.Options{Insecure: c.TLS.Insecure, NoResume: c.TLS.NoResume}, h2)
}

// applyTLSFlags checks the flags against c's URL and keep-alive and sets
// them in c: HTTP2, Streams and TLS (zero for an http URL).
func applyTLSFlags(c *loadgen.Config, tf *tlsflags.Flags, fs *cli.FlagSet) error {
	o, err := tf.Apply(c.URL, c.KeepAlive, fs)
	if err != nil {
		return err
	}
	c.HTTP2, c.Streams = o.HTTP2, o.Streams
	if !o.HTTPS {
		c.TLS = loadgen.TLSConfig{}
		return nil
	}
	c.TLS.CACerts, c.TLS.Insecure, c.TLS.NoResume, c.TLS.Version = o.CACerts, o.Insecure, o.NoResume, o.Version
	return nil
}
