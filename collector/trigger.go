package collector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/wire"
)

// Triggered is what Trigger sent.
type Triggered struct {
	CommandID string   `json:"cmd_id"`
	Devices   []string `json:"devices"` // fleet/id of the devices expected to answer
	Topics    []string `json:"topics"`
	// Pair, for a run across two devices: which device loads, which
	// serves (the result is its), and the target's watch.
	Pair *PairInfo `json:"pair,omitempty"`
}

// ErrNoDevices is returned when a trigger's selection matches no device.
var ErrNoDevices = errors.New("no device matches")

// Trigger sends a load-test command and records it; with
// req.TargetDevice, it starts a run across two devices (triggerPair);
// with req.Serve, the built-in target.
func (c *Collector) Trigger(ctx context.Context, req scheduledb.TriggerRequest) (*Triggered, error) {
	if err := req.CheckKinds(); err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	if req.Spec.URL == "" && req.Serve == nil {
		return nil, errors.New("trigger: no URL")
	}
	// The devices' decoder would refuse it; and a command goes to every
	// device of a fleet: never a key.
	if err := req.Spec.Check(); err != nil && req.Serve == nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	if cp := req.Capacity; cp != nil {
		if _, err := capacity.ParseSLO(cp.SLO); err != nil {
			return nil, fmt.Errorf("trigger: slo: %w", err)
		}
	}
	ways := 0
	if req.Device != "" {
		ways++
	}
	if len(req.Select) > 0 {
		ways++
	}
	if ways == 0 && req.Fleet == "" {
		return nil, errors.New("trigger: say which devices: --device, --fleet or --select")
	}
	if ways > 1 {
		return nil, errors.New("trigger: --device and --select exclude each other")
	}
	if req.TTL <= 0 {
		req.TTL = 10 * time.Minute
	}
	var devs []store.Device
	err := storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) (err error) {
		devs, err = c.store.Devices(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	if req.TargetDevice != "" {
		return c.triggerPair(ctx, req, devs)
	}
	type target struct{ fleet, device string }
	var targets []target
	var expected []string
	switch {
	case req.Device != "":
		for _, d := range devs {
			if d.ID == req.Device && (req.Fleet == "" || d.Fleet == req.Fleet) {
				targets = append(targets, target{d.Fleet, d.ID})
			}
		}
		if len(targets) == 0 { // never connected: no session to get it, no one to wait for
			return nil, fmt.Errorf("trigger: %w: no device %s is known%s", ErrNoDevices, escape.Printable(fleetDevice(req.Fleet, req.Device)), knownDevices(devs))
		}
		if len(targets) > 1 {
			return nil, fmt.Errorf("trigger: device %s is in several fleets: add --fleet", req.Device)
		}
	case len(req.Select) > 0:
		for _, d := range devs {
			if req.Fleet != "" && d.Fleet != req.Fleet {
				continue
			}
			if d.Matches(req.Select) {
				targets = append(targets, target{d.Fleet, d.ID})
			}
		}
	default:
		if !slices.ContainsFunc(devs, func(d store.Device) bool { return d.Fleet == req.Fleet }) {
			return nil, fmt.Errorf("trigger: %w: no device of fleet %s is known%s", ErrNoDevices, escape.Printable(req.Fleet), knownFleets(devs))
		}
		targets = append(targets, target{req.Fleet, wire.AllDevices})
		for _, d := range devs {
			if d.Fleet == req.Fleet && d.Online {
				expected = append(expected, d.Fleet+"/"+d.ID)
			}
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("trigger: %w%s", ErrNoDevices, knownDevices(devs))
	}
	now := time.Now().UTC()
	cmd := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(req.TTL),
		Kind: wire.KindLoadTest, Spec: wire.CommandSpec{LoadTest: &req.Spec}}
	switch {
	case req.Capacity != nil:
		cp := *req.Capacity
		cp.Load = req.Spec
		cmd.Kind, cmd.Spec = wire.KindCapacity, wire.CommandSpec{Capacity: &cp}
	case req.Serve != nil:
		ss := *req.Serve
		cmd.Kind, cmd.Spec = wire.KindServe, wire.CommandSpec{Serve: &ss}
	}
	out := &Triggered{CommandID: cmd.ID}
	for _, t := range targets {
		topic, err := c.send(ctx, t.fleet, t.device, cmd)
		if err != nil {
			return nil, fmt.Errorf("trigger: %w", err)
		}
		out.Topics = append(out.Topics, topic)
		if t.device != wire.AllDevices {
			out.Devices = append(out.Devices, t.fleet+"/"+t.device)
		}
	}
	out.Devices = append(out.Devices, expected...)
	sort.Strings(out.Devices)
	c.log.Info("command sent", zap.String("cmd_id", cmd.ID), zap.Strings("topics", out.Topics), zap.Int("devices", len(out.Devices)))
	return out, nil
}

// send signs cmd for device (or the fleet's _all), records it and
// publishes it on its cmd topic, which it returns.
func (c *Collector) send(ctx context.Context, fleet, device string, cmd *wire.Command) (string, error) {
	cmd, err := c.sign(cmd, fleet, device)
	if err != nil {
		return "", err
	}
	raw, err := cmd.MarshalMsg(nil)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	if err := storeCall(ctx, c.cfg.storeTimeout, func(ctx context.Context) error { return c.store.AddCommand(ctx, fleet, device, cmd, raw) }); err != nil {
		return "", err
	}
	if err := c.client.PublishCommand(ctx, fleet, device, cmd); err != nil {
		return "", err
	}
	topic, _ := wire.Topics{Prefix: c.cfg.Prefix}.Topic(fleet, device, wire.TopicCmd)
	return topic, nil
}

// sign returns cmd signed for the cmd topic of fleet and device, or cmd
// itself without a Signer.
func (c *Collector) sign(cmd *wire.Command, fleet, device string) (*wire.Command, error) {
	if c.cfg.Signer == nil {
		return cmd, nil
	}
	msg, err := cmd.SigningBytes(fleet, device)
	if err != nil {
		return nil, err
	}
	signed := *cmd
	signed.Sig = c.cfg.Signer.Sign(msg)
	return &signed, nil
}

// fleetDevice is fleet/device, or device alone without a fleet.
func fleetDevice(fleet, device string) string {
	if fleet == "" {
		return device
	}
	return fleet + "/" + device
}

// knownDevices lists the devices the store knows, for an error: at most
// 20 of them.
func knownDevices(devs []store.Device) string {
	if len(devs) == 0 {
		return " (no device has connected yet)"
	}
	var ids []string
	for i, d := range devs {
		if i == 20 {
			ids = append(ids, fmt.Sprintf("and %d more", len(devs)-20))
			break
		}
		ids = append(ids, d.Fleet+"/"+d.ID)
	}
	return " (the devices are " + escape.Printable(strings.Join(ids, ", ")) + ")"
}

// knownFleets lists the fleets of the devices the store knows, for an
// error.
func knownFleets(devs []store.Device) string {
	if len(devs) == 0 {
		return " (no device has connected yet)"
	}
	var fleets []string
	for _, d := range devs {
		if !slices.Contains(fleets, d.Fleet) {
			fleets = append(fleets, d.Fleet)
		}
	}
	return " (the fleets are " + escape.Printable(strings.Join(fleets, ", ")) + ")"
}
