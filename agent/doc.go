// Package agent owns the edgebench daemon: its configuration (Config,
// LoadConfig, BindConfigFlags; the file, environment and flag layering is
// internal/config), the policy every remote command is held to (Policy: a
// target allowlist, loopback only by default, and caps on load), the
// replay guard (ReplayGuard), the in-flight run marker that turns a run cut
// short by a crash into a "failed" event after the next boot (Inflight),
// and the systemd notify protocol and watchdog (Notifier, Watchdog).
//
// The daemon loop (Agent, Serve) wires these to the MQTT client (package
// transport) and to measure, which runs the load tests with the probe: for
// each command it checks the signature (package sign), the replay guard
// (ReplayGuard.Check), then the policy (Policy.Check), and dials only the
// addresses in the returned AllowedTarget.
package agent
