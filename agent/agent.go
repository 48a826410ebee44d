package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/sign"
	"github.com/edgebench/edgebench/target"
	"github.com/edgebench/edgebench/wire"
)

// Link is what the agent needs of its broker connection. The transport
// package's client provides it; PublishResult spools the result on disk
// before it publishes, and keeps it until the collector acknowledges it.
type Link interface {
	PublishEvent(ctx context.Context, ev *wire.Event) error
	PublishResult(ctx context.Context, r *wire.Result) error
	PublishHeartbeat(ctx context.Context, hb *wire.Heartbeat) error
}

// Options are what the daemon gets besides its Config.
type Options struct {
	Version   string
	Log       *zap.Logger
	ProbeRoot string           // "/" on a device; a fixture tree in tests
	Resolver  Resolver         // nil: the system resolver
	Now       func() time.Time // nil: time.Now
}

// Agent runs the commands a device receives: one load test (or probe
// recording) at a time, a bounded queue behind it, the built-in target on
// request. Every command gets its events; every run ends in a result.
type Agent struct {
	cfg      *Config
	opt      Options
	log      *zap.Logger
	policy   *Policy
	verifier sign.Verifier
	signReq  bool
	replay   *ReplayGuard
	link     Link
	waitLink func(context.Context) error // waits for the broker; nil: always there
	info     *wire.DeviceInfo
	bootID   string

	cmds chan incoming // from the broker, handled in order
	jobs chan *job     // accepted runs, the queue
	mu   sync.Mutex
	cur  *job // the run in progress
	seqs map[string]uint32
	srv  *serving // the built-in target, while it serves

	wg sync.WaitGroup
}

// job is an accepted loadtest or probe command.
type job struct {
	cmd      *wire.Command
	resultID string
	target   *AllowedTarget     // checked addresses (loadtest)
	marks    chan wire.MarkSpec // the marks of a watch's windows (probe)
	ctx      context.Context
	cancel   context.CancelCauseFunc
}

type serving struct {
	cmdID  string
	srv    *target.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// Errors that end a run other than by its own end.
var (
	errCancelled = errors.New("cancelled")
	errTimedOut  = errors.New("timed out")
	errShutdown  = errors.New("agent stopping")
)

// New prepares an agent. The link may be set later with SetLink, before Run.
func New(cfg *Config, opt Options) (*Agent, error) {
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.ProbeRoot == "" {
		opt.ProbeRoot = "/"
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	pol, err := NewPolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	ver, err := cfg.Signing.Verifier()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o750); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	rg, err := OpenReplayGuard(cfg.StateDir, ReplayOptions{Now: opt.Now})
	if errors.Is(err, ErrReplayLost) {
		opt.Log.Warn("replay state lost; refusing commands issued before now", zap.Error(err))
	} else if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg: cfg, opt: opt, log: opt.Log, policy: pol, verifier: ver, signReq: cfg.Signing.Required(),
		replay: rg,
		cmds:   make(chan incoming, 16),
		jobs:   make(chan *job, max(cfg.QueueSize, 0)+1),
		seqs:   map[string]uint32{},
	}
	a.info, a.bootID = measure.DeviceInfo(opt.ProbeRoot, opt.Version, cfg.Labels)
	return a, nil
}

// SetLink sets the broker connection the agent publishes through, and how
// to wait for it to be connected (nil: it always is).
func (a *Agent) SetLink(l Link, wait func(context.Context) error) { a.link, a.waitLink = l, wait }

// Status is the retained birth for connection seq.
func (a *Agent) Status(seq uint64) *wire.Status {
	return &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: a.bootID,
		ConnSeq: seq, At: a.opt.Now().UTC(), Info: a.info}
}

// incoming is a command payload as it arrived: decoded, or the error and
// whatever id could be read from it, with the topic it came on.
type incoming struct {
	cmd         *wire.Command
	to          wire.Addr // the topic's fleet and device (or "_all"); a signature must be for them
	id          string
	err         error
	interrupted *Inflight // not a command: report this interrupted run
}

// HandlePayload queues a raw command from the broker (a transport.Handler).
// It never blocks the caller, the MQTT client's worker: when the queue is
// full the command is dropped and logged.
func (a *Agent) HandlePayload(_ context.Context, topic string, b []byte) {
	in := incoming{}
	in.to, _ = wire.Topics{Prefix: a.cfg.TopicPrefix}.Parse(topic) // on an odd topic, no signature verifies
	in.cmd, in.err = wire.DecodeCommand(b)
	if in.err != nil {
		in.id = wire.PeekID(b)
	}
	select {
	case a.cmds <- in:
	default:
		a.log.Warn("command dropped: the agent is flooded", zap.String("topic", topic))
	}
}

// Run handles commands and heartbeats until ctx ends, then cancels the run
// in progress, waits for it to publish its result, and returns.
func (a *Agent) Run(ctx context.Context) error {
	if a.link == nil {
		return errors.New("agent: no link")
	}
	// A run cut short by a crash is read now, before a new run writes its
	// own marker, and reported once the broker can hear it.
	interrupted := a.takeInflight()
	if interrupted != nil {
		go func() {
			if a.waitLink == nil || a.waitLink(ctx) == nil {
				select {
				case a.cmds <- incoming{interrupted: interrupted}:
				case <-ctx.Done():
				}
			}
		}()
	}
	runCtx, stopRuns := context.WithCancelCause(context.Background())
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.runner(runCtx)
	}()
	hb := time.NewTicker(a.cfg.Heartbeat)
	defer hb.Stop()
	hp := probe.New(a.opt.ProbeRoot)
	defer hp.Close()
	hp.Sample() // the first sample only sets the baseline for rates
	start := a.opt.Now()
	for {
		select {
		case <-ctx.Done():
			stopRuns(errShutdown)
			a.mu.Lock()
			if a.cur != nil {
				a.cur.cancel(errCancelled)
			}
			a.mu.Unlock()
			a.stopServing()
			a.wg.Wait()
			return nil
		case p := <-a.cmds:
			a.command(runCtx, p)
		case <-hb.C:
			a.heartbeat(ctx, hp, start)
		}
	}
}

// takeInflight reads and clears the marker of a run cut short by a crash
// or a power loss.
func (a *Agent) takeInflight() *Inflight {
	in, err := RecoverInflight(a.cfg.StateDir)
	if err != nil {
		a.log.Warn("in-flight marker unreadable", zap.Error(err))
	}
	if err := ClearInflight(a.cfg.StateDir); err != nil {
		a.log.Warn("clear in-flight marker", zap.Error(err))
	}
	return in
}

// command checks and dispatches one command. A payload that does not
// decode is rejected when its id can be read, and only logged otherwise.
func (a *Agent) command(ctx context.Context, in incoming) {
	if in.interrupted != nil {
		a.log.Warn("a run was interrupted by a restart", zap.String("cmd", in.interrupted.CommandID))
		a.send(ctx, &wire.Event{V: wire.SchemaVersion, CommandID: in.interrupted.CommandID, Seq: wire.SeqInterrupted,
			State: wire.StateFailed, Reason: InterruptedReason, At: a.opt.Now().UTC()})
		return
	}
	if in.err != nil {
		a.log.Warn("malformed command", zap.String("cmd", in.id), zap.Error(in.err))
		if in.id != "" {
			a.event(ctx, in.id, wire.StateRejected, "malformed command: "+in.err.Error(), nil, "")
		}
		return
	}
	cmd := in.cmd
	log := a.log.With(zap.String("cmd", cmd.ID), zap.String("kind", string(cmd.Kind)))
	if !a.selected(cmd) {
		log.Debug("command is for other devices")
		return
	}
	reject := func(reason string) {
		log.Warn("command rejected", zap.String("reason", reason))
		a.event(ctx, cmd.ID, wire.StateRejected, reason, nil, "")
	}
	if a.verifier != nil || a.signReq {
		msg, err := cmd.SigningBytes(in.to.Fleet, in.to.Device)
		if err == nil {
			err = sign.CheckSignature(a.verifier, a.signReq, msg, cmd.Sig)
		}
		if err != nil {
			reject(err.Error())
			return
		}
	}
	if err := a.replay.Check(cmd.ID, cmd.IssuedAt, cmd.ExpiresAt); err != nil {
		if errors.Is(err, ErrReplay) {
			// A replay is never acted on nor answered: the command's own
			// events already went out.
			log.Warn("replayed command ignored", zap.Error(err))
			return
		}
		reject(err.Error())
		return
	}
	switch cmd.Kind {
	case wire.KindLoadTest, wire.KindProbe, wire.KindCapacity:
		a.enqueue(ctx, cmd, reject)
	case wire.KindCancel:
		a.cancelCommand(ctx, cmd, reject)
	case wire.KindMark:
		a.markCommand(ctx, cmd, reject)
	case wire.KindServe:
		a.serve(ctx, cmd, reject)
	case wire.KindInfo:
		// The system info is in the retained birth; the answer names it.
		i := a.info
		a.event(ctx, cmd.ID, wire.StateAccepted, "", nil, "")
		a.event(ctx, cmd.ID, wire.StateRunning, "", nil, "")
		a.event(ctx, cmd.ID, wire.StateSucceeded, fmt.Sprintf("%s, %s, %d cores, %s, kernel %s, edgebench %s",
			i.Board, i.CPUModel, i.Cores, i.OS, i.Kernel, i.AgentVersion), nil, "")
	default:
		reject(fmt.Sprintf("unknown command kind %q", cmd.Kind))
	}
}

// selected reports whether a fleet-wide command's label selector matches
// this device (a device's own commands carry none).
func (a *Agent) selected(cmd *wire.Command) bool {
	for _, l := range cmd.Select {
		if a.cfg.Labels[l.K] != l.V && !(l.K == "device" && l.V == a.cfg.DeviceID) {
			return false
		}
	}
	return true
}

// enqueue checks a loadtest or probe command and accepts it as the run, or
// behind the run when it asked to queue, or rejects it.
func (a *Agent) enqueue(ctx context.Context, cmd *wire.Command, reject func(string)) {
	j := &job{cmd: cmd, resultID: wire.NewID()}
	queue := false
	switch cmd.Kind {
	case wire.KindLoadTest:
		lt := cmd.Spec.LoadTest
		if lt == nil {
			reject("loadtest without a spec")
			return
		}
		spec, err := loadSpecOf(lt)
		var t *AllowedTarget
		if err == nil {
			t, err = a.policy.Check(ctx, spec, a.opt.Resolver)
		}
		if err != nil {
			reject(err.Error())
			return
		}
		j.target, queue = t, lt.Queue
	case wire.KindCapacity:
		cs := cmd.Spec.Capacity
		if cs == nil {
			reject("capacity without a spec")
			return
		}
		sc, err := a.capacityConfig(cs)
		var t *AllowedTarget
		if err == nil {
			var spec LoadSpec
			if spec, err = capacityLoadSpec(cs, sc); err == nil {
				t, err = a.policy.Check(ctx, spec, a.opt.Resolver)
			}
		}
		if err != nil {
			reject(err.Error())
			return
		}
		j.target, queue = t, cs.Load.Queue
	case wire.KindProbe:
		if err := a.checkWatch(cmd.Spec.Probe); err != nil {
			reject(err.Error())
			return
		}
		j.marks = make(chan wire.MarkSpec, markQueue)
	}
	a.mu.Lock()
	busy := a.cur != nil || len(a.jobs) > 0
	a.mu.Unlock()
	if busy && !queue {
		reject("busy: another test is running")
		return
	}
	select {
	case a.jobs <- j:
		a.event(ctx, cmd.ID, wire.StateAccepted, "", nil, "")
	default:
		reject(fmt.Sprintf("busy: the queue is full (%d)", cap(a.jobs)-1))
	}
}

func (a *Agent) cancelCommand(ctx context.Context, cmd *wire.Command, reject func(string)) {
	cs := cmd.Spec.Cancel
	if cs == nil || cs.CommandID == "" {
		reject("cancel without a command id")
		return
	}
	a.mu.Lock()
	var found bool
	if a.cur != nil && a.cur.cmd.ID == cs.CommandID {
		a.cur.cancel(errCancelled)
		found = true
	}
	a.mu.Unlock()
	if s := a.serving(); !found && s != nil && s.cmdID == cs.CommandID {
		a.stopServing()
		found = true
	}
	if !found {
		reject(fmt.Sprintf("no running command %s", cs.CommandID))
		return
	}
	a.event(ctx, cmd.ID, wire.StateAccepted, "", nil, "")
	a.event(ctx, cmd.ID, wire.StateRunning, "", nil, "")
	a.event(ctx, cmd.ID, wire.StateSucceeded, "", nil, "")
}

// runner executes the accepted runs one after another.
func (a *Agent) runner(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			// Queued commands that never ran end as cancelled.
			for {
				select {
				case j := <-a.jobs:
					a.event(context.Background(), j.cmd.ID, wire.StateCancelled, "agent stopping", nil, "")
				default:
					return
				}
			}
		case j := <-a.jobs:
			a.execute(ctx, j)
		}
	}
}

// event publishes the next state of a command, numbering its events.
func (a *Agent) event(ctx context.Context, cmdID string, st wire.EventState, reason string, p *wire.Progress, resultID string) {
	a.publishEvent(ctx, &wire.Event{CommandID: cmdID, State: st, Reason: reason, Progress: p, ResultID: resultID, At: a.opt.Now().UTC()})
}

// publishEvent publishes ev, its version and number set.
func (a *Agent) publishEvent(ctx context.Context, ev *wire.Event) {
	cmdID, st := ev.CommandID, ev.State
	a.mu.Lock()
	a.seqs[cmdID]++
	seq := a.seqs[cmdID]
	if st.Terminal() {
		delete(a.seqs, cmdID)
	}
	a.mu.Unlock()
	ev.V, ev.Seq = wire.SchemaVersion, seq
	a.send(ctx, ev)
}

// send publishes an event.
func (a *Agent) send(ctx context.Context, ev *wire.Event) {
	if err := a.link.PublishEvent(ctx, ev); err != nil {
		a.log.Warn("publish event", zap.String("cmd", ev.CommandID), zap.String("state", string(ev.State)), zap.Error(err))
	}
}
