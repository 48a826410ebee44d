package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
)

// get fetches url with Go's client over the protocols given and returns
// the protocol of the response and the length of its body.
func get(t *testing.T, url, ca string, protocols func(*http.Protocols), maxTLS uint16) (string, int, error) {
	t.Helper()
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(pem)
	var p http.Protocols
	protocols(&p)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: maxTLS}, Protocols: &p}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TLS != nil && resp.TLS.Version != maxTLS && maxTLS != 0 {
		t.Errorf("%s: TLS version %x, want %x", url, resp.TLS.Version, maxTLS)
	}
	return resp.Proto, len(b), nil
}

func h1(p *http.Protocols)  { p.SetHTTP1(true) }
func h2(p *http.Protocols)  { p.SetHTTP2(true) }
func h2c(p *http.Protocols) { p.SetUnencryptedHTTP2(true) }

// TestTLSServers checks what the HTTPS tests rely on: nginx and caddy
// serve the document over TLS 1.2 and 1.3, HTTP/1.1 and HTTP/2, and h2c,
// with a certificate the test CA signed.
func TestTLSServers(t *testing.T) {
	ngx := NginxWith(t, NginxConfig{TLS: true})
	cdy := Caddy(t)
	for _, c := range []struct {
		name, url, ca string
		protos        func(*http.Protocols)
		maxTLS        uint16
		want          string
	}{
		{"nginx https h1 tls1.3", "https://localhost:" + port(ngx.HTTPS) + "/index.html", ngx.Certs.CA, h1, tls.VersionTLS13, "HTTP/1.1"},
		{"nginx https h2 tls1.3", "https://127.0.0.1:" + port(ngx.HTTPS) + "/index.html", ngx.Certs.CA, h2, tls.VersionTLS13, "HTTP/2.0"},
		{"nginx https h2 tls1.2", "https://127.0.0.1:" + port(ngx.HTTPS) + "/index.html", ngx.Certs.CA, h2, tls.VersionTLS12, "HTTP/2.0"},
		{"nginx tls1.2-only", "https://127.0.0.1:" + port(ngx.HTTPS12) + "/index.html", ngx.Certs.CA, h1, tls.VersionTLS12, "HTTP/1.1"},
		{"nginx h2c", "http://" + ngx.H2C + "/index.html", ngx.Certs.CA, h2c, 0, "HTTP/2.0"},
		{"caddy https h2", "https://localhost:" + port(cdy.HTTPS) + "/index.html", cdy.Certs.CA, h2, tls.VersionTLS13, "HTTP/2.0"},
		{"caddy https h1 tls1.2", "https://127.0.0.1:" + port(cdy.HTTPS) + "/index.html", cdy.Certs.CA, h1, tls.VersionTLS12, "HTTP/1.1"},
		{"caddy h2c", "http://" + cdy.H2C + "/index.html", cdy.Certs.CA, h2c, 0, "HTTP/2.0"},
	} {
		proto, n, err := get(t, c.url, c.ca, c.protos, c.maxTLS)
		if err != nil || proto != c.want || n != 612 {
			t.Errorf("%s: %s, %d bytes, %v; want %s, 612 bytes", c.name, proto, n, err, c.want)
		}
	}
	// nginx refuses TLS 1.3 on its TLS 1.2 listener.
	if _, _, err := get(t, "https://127.0.0.1:"+port(ngx.HTTPS12)+"/", ngx.Certs.CA, h1, 0); err != nil {
		t.Errorf("TLS 1.2-only listener: %v", err)
	}
	var ce *tls.CertificateVerificationError
	if _, _, err := get(t, "https://127.0.0.1:"+port(ngx.HTTPS)+"/", cdy.Certs.CA, h1, 0); !errors.As(err, &ce) {
		t.Errorf("another CA's certificate: %v, want a verification error", err)
	}
}

func port(addr string) string { return addr[len("127.0.0.1:"):] }
