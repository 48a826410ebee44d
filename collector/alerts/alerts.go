package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
)

// Config configures the alerts. Zero values take the defaults.
type Config struct {
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

func (a *Config) fill() {
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
	KindChange   = "change"  // a lasting change in a series
	KindQuiet    = "quiet"   // a device stopped reporting (retained; cleared when it is back)
	KindMissed   = "missed"  // a schedule's firing missed devices, or failed
	KindSpool    = "spool"   // a device's spool keeps growing (retained; cleared when it shrinks)
	alertsDevice = "_alerts" // the third level of an alert's topic
)

// Alert is what the collector publishes on
// <prefix>/<fleet>/_alerts/<kind>/<subject> and POSTs to the webhook.
type Alert struct {
	Kind     string                  `json:"kind"`
	Fleet    string                  `json:"fleet"`
	Subject  string                  `json:"subject"` // the device id, or the schedule's name
	At       time.Time               `json:"at"`
	Summary  string                  `json:"summary"`
	Change   *seriesdb.Change        `json:"change,omitempty"`
	Run      *scheduledb.ScheduleRun `json:"run,omitempty"`
	LastSeen time.Time               `json:"last_seen,omitzero"`
	Spooled  int                     `json:"spooled,omitempty"`
	Cleared  bool                    `json:"cleared,omitempty"` // the state alerted before is over
}

// Topic is the alert's MQTT topic under prefix.
func (a *Alert) Topic(prefix string) string {
	return prefix + "/" + a.Fleet + "/" + alertsDevice + "/" + a.Kind + "/" + a.Subject
}

// retained: the alerts that are states (a device quiet, a spool
// growing) stay on the broker for whoever subscribes later; events do not.
func (a *Alert) retained() bool { return a.Kind == KindQuiet || a.Kind == KindSpool }

// Store is what the alerts read and write of the store (a *store.Store).
type Store interface {
	// ChangesToAlert lists, oldest first, at most limit stored changes no
	// alert was raised for.
	ChangesToAlert(ctx context.Context, limit int) ([]seriesdb.Change, error)
	// ClaimChange records that the alert of the stored change seq is
	// raised and reports whether this collector is the one to raise it.
	ClaimChange(ctx context.Context, seq int64, at time.Time) (bool, error)
	// Devices lists the devices the store knows.
	Devices(ctx context.Context) ([]store.Device, error)
	// ClaimAlert records that an alert about key was raised and reports
	// whether this collector is the first to raise it.
	ClaimAlert(ctx context.Context, key, kind, instance string, at time.Time, body any) (bool, error)
}

// Publish publishes a message on the collector's MQTT connection, at QoS 1.
type Publish func(ctx context.Context, topic string, retained bool, body []byte) error

// Alerter raises the alerts of one collector: it looks for them every
// Interval (Run), publishes each on MQTT and posts it to the webhook.
type Alerter struct {
	cfg     Config
	st      Store
	publish Publish
	prefix  string
	log     *zap.Logger

	out         chan publication // alerts waiting for their MQTT publication
	queue       chan *Alert      // alerts waiting for the webhook
	sent        atomic.Int64     // webhook deliveries
	dropped     atomic.Int64     // alerts the full queue or the retries dropped
	spool       map[string]int
	quiet       map[string]bool
	hc          *http.Client
	published   atomic.Int64
	unpublished atomic.Int64 // alerts not published: their queue was full
}

// publication is an alert as it is published on MQTT.
type publication struct {
	topic    string
	retained bool
	body     []byte
}

// Stats counts the alerts.
type Stats struct {
	Published int64 // on MQTT
	Posted    int64 // to the webhook
	Dropped   int64 // not posted: the queue was full or every attempt failed
	// Unpublished counts the alerts not published on MQTT: more were
	// waiting for the broker than its queue holds.
	Unpublished int64
}

// Stats returns the alerts' counts.
func (al *Alerter) Stats() Stats {
	return Stats{Published: al.published.Load(), Posted: al.sent.Load(), Dropped: al.dropped.Load(), Unpublished: al.unpublished.Load()}
}

// New returns the alerter of a collector whose topics are under prefix;
// Run runs it.
func New(cfg Config, st Store, publish Publish, prefix string, log *zap.Logger) *Alerter {
	cfg.fill()
	if log == nil {
		log = zap.NewNop()
	}
	return &Alerter{cfg: cfg, st: st, publish: publish, prefix: prefix, log: log,
		out: make(chan publication, publishQueue), queue: make(chan *Alert, cfg.QueueLen), spool: map[string]int{}, quiet: map[string]bool{},
		hc: &http.Client{Timeout: 10 * time.Second}}
}

// publishQueue is how many alerts may wait for their MQTT publication;
// past it, new ones are dropped (and counted): each waits at most 10 s
// for the broker, one at a time.
const publishQueue = 1024

// Run looks for alerts every Interval, publishes the raised ones on MQTT
// in the order they were raised and posts them to the webhook, until ctx
// ends.
func (al *Alerter) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { al.watch(ctx) })
	wg.Go(func() { al.publisher(ctx) })
	if al.cfg.Webhook != "" {
		wg.Go(func() { al.webhook(ctx) })
	}
	wg.Wait()
}

// publisher publishes the raised alerts on MQTT, one at a time.
func (al *Alerter) publisher(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-al.out:
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := al.publish(pctx, p.topic, p.retained, p.body)
			cancel()
			if err != nil {
				al.log.Warn("alert publish", zap.Error(err))
				continue
			}
			al.published.Add(1)
		}
	}
}

// Raise publishes an alert on MQTT and queues it for the webhook; it
// never waits for either.
func (al *Alerter) Raise(a *Alert) {
	al.log.Info("alert", zap.String("kind", a.Kind), zap.String("fleet", a.Fleet), zap.String("subject", a.Subject), zap.String("summary", a.Summary))
	body, err := json.Marshal(a)
	if err != nil {
		return
	}
	if a.Cleared && a.retained() {
		body = nil // an empty retained message removes the state
	}
	select {
	case al.out <- publication{a.Topic(al.prefix), a.retained(), body}:
	default:
		al.unpublished.Add(1)
		al.log.Warn("alert not published: too many waiting for the broker", zap.String("kind", a.Kind), zap.String("fleet", a.Fleet),
			zap.String("subject", a.Subject))
	}
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
func (al *Alerter) webhook(ctx context.Context) {
	defer al.hc.CloseIdleConnections()
	for {
		select {
		case <-ctx.Done():
			return
		case a := <-al.queue:
			body, _ := json.Marshal(a)
			wait := al.cfg.Backoff
			ok := false
			for try := 0; try < al.cfg.Retries && !ok; try++ {
				if try > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
					wait *= 2
				}
				err := al.post(ctx, body)
				if ok = err == nil; !ok {
					al.log.Warn("alert webhook", zap.Int("attempt", try+1), zap.Error(err))
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

func (al *Alerter) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, al.cfg.Webhook, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "edgebench-collector")
	resp, err := al.hc.Do(req)
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
func (al *Alerter) watch(ctx context.Context) {
	t := time.NewTicker(al.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := al.check(ctx, time.Now()); err != nil && ctx.Err() == nil {
			al.log.Warn("alerts", zap.Error(err))
		}
	}
}

// check raises the alerts due at now.
func (al *Alerter) check(ctx context.Context, now time.Time) error {
	if err := al.changes(ctx, now); err != nil {
		return err
	}
	devs, err := al.st.Devices(ctx)
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
			ok, err := al.st.ClaimAlert(ctx, "device:"+key, KindQuiet, strconv.FormatInt(last.UnixNano(), 10), now, nil)
			if err != nil {
				return err
			}
			if ok {
				al.Raise(&Alert{Kind: KindQuiet, Fleet: d.Fleet, Subject: d.ID, At: now, LastSeen: last,
					Summary: fmt.Sprintf("%s stopped reporting: last seen %s ago", key, now.Sub(last).Round(time.Second))})
			}
		case !quiet && al.quiet[key]:
			delete(al.quiet, key)
			al.Raise(&Alert{Kind: KindQuiet, Fleet: d.Fleet, Subject: d.ID, At: now, LastSeen: last, Cleared: true,
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
			ok, err := al.st.ClaimAlert(ctx, "device:"+key, KindSpool, hour, now, nil)
			if err != nil {
				return err
			}
			if ok {
				al.Raise(&Alert{Kind: KindSpool, Fleet: d.Fleet, Subject: d.ID, At: now, Spooled: n,
					Summary: fmt.Sprintf("%s: %d results waiting in its spool, %d before", key, n, prev)})
			}
		case n < prev && prev > al.cfg.SpoolMax:
			al.Raise(&Alert{Kind: KindSpool, Fleet: d.Fleet, Subject: d.ID, At: now, Spooled: n, Cleared: true,
				Summary: fmt.Sprintf("%s: its spool shrinks (%d)", key, n)})
		}
	}
	return nil
}

// changeBatch is how many stored changes one read of the alert loop
// takes.
const changeBatch = 500

// changes raises an alert for each change stored since the last pass (the
// changes no alert was raised for yet, whichever collector found them):
// each is claimed once among the collectors sharing the store. A pass
// reads what changed, never the history.
func (al *Alerter) changes(ctx context.Context, now time.Time) error {
	for {
		cs, err := al.st.ChangesToAlert(ctx, changeBatch)
		if err != nil {
			return err
		}
		for i := range cs {
			ch := &cs[i]
			ok, err := al.st.ClaimChange(ctx, ch.Seq, now)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			verdict := "better"
			if ch.Worse() {
				verdict = "worse"
			}
			al.Raise(&Alert{Kind: KindChange, Fleet: ch.Fleet, Subject: ch.Device, At: now, Change: ch,
				Summary: fmt.Sprintf("%s %s: %.4g -> %.4g (%+.1f%%, %s) on %s", ch.Fleet+"/"+ch.Device, ch.Metric, ch.Before, ch.After, ch.Pct, verdict, ch.Spec)})
		}
		if len(cs) < changeBatch {
			return nil
		}
	}
}

// Missed raises an alert for a firing that missed devices or failed, in
// each fleet concerned (the collector that fired it raises it).
func (al *Alerter) Missed(sch *scheduledb.Schedule, run *scheduledb.ScheduleRun) {
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
		al.Raise(&Alert{Kind: KindMissed, Fleet: f, Subject: sch.Name, At: run.FiredAt, Run: run, Summary: summary})
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
