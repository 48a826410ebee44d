// Package client speaks the collector's web API (/api/) for the command
// line and the tests: a trigger and the command's status while it runs,
// a cancel, the schedules, a comparison's text. Each call is one request
// with the API's token (when there is one) and a deadline; an answer
// other than 200 is an error with the collector's own words.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
)

// Timeout bounds each request.
const Timeout = 30 * time.Second

// maxAnswer bounds what an answer may hold.
const maxAnswer = 64 << 20

// Client is the API of the collector at one web address.
type Client struct {
	base string // scheme and host, no trailing slash
	hc   *http.Client
}

// New is the API of the collector at server (http://127.0.0.1:8080), with
// token as its bearer token ("": none).
func New(server, token string) *Client {
	hc := &http.Client{Timeout: Timeout}
	if token != "" {
		hc.Transport = bearer{token}
	}
	return &Client{base: strings.TrimSuffix(server, "/"), hc: hc}
}

// Do sends method to path (with its query), body as JSON when not nil,
// and decodes a 200 answer's JSON into v.
func (c *Client) Do(ctx context.Context, method, path string, body, v any) error {
	b, err := c.raw(ctx, method, path, body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Text writes the body of a 200 answer to GET path to w.
func (c *Client) Text(ctx context.Context, path string, w io.Writer) error {
	b, err := c.raw(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func (c *Client) raw(ctx context.Context, method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// Trigger sends a test (or a run across two devices, or a serve) to the
// devices req selects.
func (c *Client) Trigger(ctx context.Context, req scheduledb.TriggerRequest) (collector.Triggered, error) {
	var t collector.Triggered
	err := c.Do(ctx, http.MethodPost, "/api/trigger", req, &t)
	return t, err
}

// Command is the status of command id: its devices' events and results
// (and its pair's, for a run across two devices).
func (c *Client) Command(ctx context.Context, id string) (collector.CommandStatus, error) {
	// A fresh value each call: decoding into the last one would keep its
	// events' progress and reason where this answer omits them.
	var st collector.CommandStatus
	err := c.Do(ctx, http.MethodGet, "/api/commands/"+url.PathEscape(id), nil, &st)
	return st, err
}

// Cancel sends the cancel of command id to the devices running it.
func (c *Client) Cancel(ctx context.Context, id string) (collector.Triggered, error) {
	var t collector.Triggered
	err := c.Do(ctx, http.MethodPost, "/api/commands/"+url.PathEscape(id)+"/cancel", nil, &t)
	return t, err
}

// bearer adds the API's token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
