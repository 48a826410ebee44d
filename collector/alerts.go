package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
)

// AlertConfig configures the alerts. Zero values take the defaults.
type AlertConfig struct {
	// Webhook, when set, receives every alert as a JSON POST, retried
	// with backoff; the alerts wait in a queue of their own, never in the
	// ingest's way.
	Webhook string
	// Interval is how often the collector looks for changes, devices
	// gone quiet and growing spools; default 1 min.
	Interval time.Duration
	// Quiet is how long a device that was online may go without a
	// heartbeat or status before it is said to have stopped reporting;
	// default 5 min.
	Quiet time.Duration
	// SpoolMax is the number of results waiting in a device's spool
	// above which a spool that keeps growing raises an alert; default 10.
	SpoolMax int
	Retries  int           // webhook attempts per alert; default 6
	Backoff  time.Duration // the first retry's wait, doubled each time; default 1s
	QueueLen int           // alerts waiting for the webhook; default 1024 (the newest are dropped past it)
}

func (a *AlertConfig) fill() {
	if a.Interval <= 0 {
		a.Interval = time.Minute
	}
	if a.Quiet <= 0 {
		a.Quiet = 5 * time.Minute
	}
	if a.SpoolMax <= 0 {
		a.SpoolMax = 10
	}
	if a.Retries <= 0 {
		a.Retries = 6
	}
	if a.Backoff <= 0 {
		a.Backoff = time.Second
	}
	if a.QueueLen <= 0 {
		a.QueueLen = 1024
	}
}

// CheckWebhook checks an --alert-webhook URL.
func CheckWebhook(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("alert webhook %q: want http(s)://host[:port]/path", s)
	}
	return nil
}

// Alert kinds, the fourth level of an alert's topic. None is a device
// topic's kind (status, event, result, heartbeat, cmd, ack), so a device
// whose id is "_alerts" can neither publish nor read one.
const (
	AlertChange  = "change"  // a lasting change in a series
	AlertQuiet   = "quiet"   // a device stopped reporting (retained; cleared when it is back)
	AlertMissed  = "missed"  // a schedule's firing missed devices, or failed
	AlertSpool   = "spool"   // a device's spool keeps growing (retained; cleared when it shrinks)
	alertsDevice = "_alerts" // the third level of an alert's topic
)

// Alert is what the collector publishes on
// <prefix>/<fleet>/_alerts/<kind>/<subject> and POSTs to the webhook.
type Alert struct {
	Kind     string             `json:"kind"`
	Fleet    string             `json:"fleet"`
	Subject  string             `json:"subject"` // the device id, or the schedule's name
	At       time.Time          `json:"at"`
	Summary  string             `json:"summary"`
	Change   *Change            `json:"change,omitempty"`
	Run      *store.ScheduleRun `json:"run,omitempty"`
	LastSeen time.Time          `json:"last_seen,omitzero"`
	Spooled  int                `json:"spooled,omitempty"`
	Cleared  bool               `json:"cleared,omitempty"` // the state alerted before is over
}

// Topic is the alert's MQTT topic under prefix.
func (a *Alert) Topic(prefix string) string {
	return prefix + "/" + a.Fleet + "/" + alertsDevice + "/" + a.Kind + "/" + a.Subject
}

// retained: the alerts that are states (a device quiet, a spool
// growing) stay on the broker for whoever subscribes later; events do not.
func (a *Alert) retained() bool { return a.Kind == AlertQuiet || a.Kind == AlertSpool }

// alerter holds the alerts' state in a collector.
type alerter struct {
	cfg       AlertConfig
	queue     chan *Alert
	sent      atomic.Int64 // webhook deliveries
	dropped   atomic.Int64 // alerts the full queue or the retries dropped
	spool     map[string]int
	quiet     map[string]bool
	hc        *http.Client
	started   time.Time
	published atomic.Int64
}

// AlertStats counts the alerts.
type AlertStats struct {
	Published int64 // on MQTT
	Posted    int64 // to the webhook
	Dropped   int64 // not posted: the queue was full or every attempt failed
}

// AlertStats returns the alerts' counts.
func (c *Collector) AlertStats() AlertStats {
	if c.alerts == nil {
		return AlertStats{}
	}
	return AlertStats{Published: c.alerts.published.Load(), Posted: c.alerts.sent.Load(), Dropped: c.alerts.dropped.Load()}
}

func (c *Collector) startAlerts() {
	cfg := c.cfg.Alerts
	cfg.fill()
	a := &alerter{cfg: cfg, queue: make(chan *Alert, cfg.QueueLen), spool: map[string]int{}, quiet: map[string]bool{},
		hc: &http.Client{Timeout: 10 * time.Second}, started: time.Now()}
	c.alerts = a
	c.wg.Add(1)
	go c.watch()
	if cfg.Webhook != "" {
		c.wg.Add(1)
		go c.webhook()
	}
}

// raise publishes an alert on MQTT and queues it for the webhook; it
// never waits for either.
func (c *Collector) raise(a *Alert) {
	al := c.alerts
	if al == nil {
		return
	}
	c.log.Info("alert", zap.String("kind", a.Kind), zap.String("fleet", a.Fleet), zap.String("subject", a.Subject), zap.String("summary", a.Summary))
	body, err := json.Marshal(a)
	if err != nil {
		return
	}
	if a.Cleared && a.retained() {
		body = nil // an empty retained message removes the state
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		defer cancel()
		if err := c.client.Publish(ctx, a.Topic(c.cfg.Prefix), 1, a.retained(), body); err != nil {
			c.log.Warn("alert publish", zap.Error(err))
			return
		}
		al.published.Add(1)
	}()
	if al.cfg.Webhook == "" {
		return
	}
	select {
	case al.queue <- a:
	default:
		al.dropped.Add(1)
	}
}

// webhook posts the queued alerts, one at a time, each retried with
// doubling waits.
func (c *Collector) webhook() {
	defer c.wg.Done()
	al := c.alerts
	defer al.hc.CloseIdleConnections()
	for {
		select {
		case <-c.ctx.Done():
			return
		case a := <-al.queue:
			body, _ := json.Marshal(a)
			wait := al.cfg.Backoff
			ok := false
			for try := 0; try < al.cfg.Retries && !ok; try++ {
				if try > 0 {
					select {
					case <-c.ctx.Done():
						return
					case <-time.After(wait):
					}
					wait *= 2
				}
				err := c.post(body)
				if ok = err == nil; !ok {
					c.log.Warn("alert webhook", zap.Int("attempt", try+1), zap.Error(err))
				}
			}
			if ok {
				al.sent.Add(1)
			} else {
				al.dropped.Add(1)
			}
		}
	}
}

func (c *Collector) post(body []byte) error {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.alerts.cfg.Webhook, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "edgebench-collector")
	resp, err := c.alerts.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errors.New(resp.Status)
	}
	return nil
}

// watch looks for changes, quiet devices and growing spools every
// Interval.
func (c *Collector) watch() {
	defer c.wg.Done()
	t := time.NewTicker(c.alerts.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if err := c.checkAlerts(c.ctx, time.Now()); err != nil && c.ctx.Err() == nil {
			c.log.Warn("alerts", zap.Error(err))
		}
	}
}

// checkAlerts raises the alerts due at now.
func (c *Collector) checkAlerts(ctx context.Context, now time.Time) error {
	al := c.alerts
	// Changes found in the last day, with 30 days of history before.
	cs, err := Changes(ctx, c.store, ChangeOptions{Since: now.Add(-24 * time.Hour), History: 30 * 24 * time.Hour})
	if err != nil {
		return err
	}
	for i := range cs {
		ch := &cs[i]
		ok, err := c.store.ClaimAlert(ctx, ch.Series, ch.Metric, ch.ResultID, ch.At, ch)
		if err != nil {
			return err
		}
		if ok {
			verdict := "better"
			if ch.Worse() {
				verdict = "worse"
			}
			c.raise(&Alert{Kind: AlertChange, Fleet: ch.Fleet, Subject: ch.Device, At: now, Change: ch,
				Summary: fmt.Sprintf("%s %s: %.4g -> %.4g (%+.1f%%, %s) on %s", ch.Fleet+"/"+ch.Device, ch.Metric, ch.Before, ch.After, ch.Pct, verdict, ch.Spec)})
		}
	}
	devs, err := c.store.Devices(ctx)
	if err != nil {
		return err
	}
	for _, d := range devs {
		key := d.Fleet + "/" + d.ID
		last := d.LastSeen
		if d.Heartbeat != nil && d.Heartbeat.At.After(last) {
			last = d.Heartbeat.At
		}
		quiet := !last.IsZero() && now.Sub(last) > al.cfg.Quiet
		switch {
		case quiet && !al.quiet[key]:
			al.quiet[key] = true
			ok, err := c.store.ClaimAlert(ctx, "device:"+key, AlertQuiet, strconv.FormatInt(last.UnixNano(), 10), now, nil)
			if err != nil {
				return err
			}
			if ok {
				c.raise(&Alert{Kind: AlertQuiet, Fleet: d.Fleet, Subject: d.ID, At: now, LastSeen: last,
					Summary: fmt.Sprintf("%s stopped reporting: last seen %s ago", key, now.Sub(last).Round(time.Second))})
			}
		case !quiet && al.quiet[key]:
			delete(al.quiet, key)
			c.raise(&Alert{Kind: AlertQuiet, Fleet: d.Fleet, Subject: d.ID, At: now, LastSeen: last, Cleared: true,
				Summary: key + " reports again"})
		}
		if d.Heartbeat == nil {
			continue
		}
		n, prev := d.Heartbeat.Spooled, al.spool[key]
		al.spool[key] = n
		switch {
		case n > al.cfg.SpoolMax && n > prev && prev > 0:
			hour := strconv.FormatInt(now.Truncate(time.Hour).Unix(), 10) // once an hour at most
			ok, err := c.store.ClaimAlert(ctx, "device:"+key, AlertSpool, hour, now, nil)
			if err != nil {
				return err
			}
			if ok {
				c.raise(&Alert{Kind: AlertSpool, Fleet: d.Fleet, Subject: d.ID, At: now, Spooled: n,
					Summary: fmt.Sprintf("%s: %d results waiting in its spool, %d before", key, n, prev)})
			}
		case n < prev && prev > al.cfg.SpoolMax:
			c.raise(&Alert{Kind: AlertSpool, Fleet: d.Fleet, Subject: d.ID, At: now, Spooled: n, Cleared: true,
				Summary: fmt.Sprintf("%s: its spool shrinks (%d)", key, n)})
		}
	}
	return nil
}

// scheduleAlert raises an alert for a firing that missed devices or
// failed, in each fleet concerned (the collector that fired it raises it).
func (c *Collector) scheduleAlert(sch *store.Schedule, run *store.ScheduleRun) {
	if len(run.Missed) == 0 && run.Error == "" {
		return
	}
	fleets := map[string]int{}
	for _, m := range run.Missed {
		f, _, _ := cutFleet(m.Device)
		fleets[f]++
	}
	if len(fleets) == 0 {
		fleets[sch.Trigger.Fleet]++
	}
	for f, n := range fleets {
		if f == "" {
			continue
		}
		summary := fmt.Sprintf("schedule %s at %s: %d devices missed", sch.Name, run.DueAt.UTC().Format(time.RFC3339), n)
		if run.Error != "" {
			summary = fmt.Sprintf("schedule %s at %s: %s", sch.Name, run.DueAt.UTC().Format(time.RFC3339), run.Error)
		}
		c.raise(&Alert{Kind: AlertMissed, Fleet: f, Subject: sch.Name, At: run.FiredAt, Run: run, Summary: summary})
	}
}

func cutFleet(addr string) (fleet, id string, ok bool) {
	for i := 0; i < len(addr); i++ {
		if addr[i] == '/' {
			return addr[:i], addr[i+1:], true
		}
	}
	return addr, "", false
}
