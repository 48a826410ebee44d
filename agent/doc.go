// Package agent owns the edgebench daemon's parts that stand apart from the
// MQTT transport: its configuration (Config, LoadConfig, BindConfigFlags),
// the policy every remote command is held to (Policy: a target allowlist,
// loopback only by default, and caps on load), command signature checks
// (Verifier, Signer: Ed25519 or HMAC-SHA256), the replay guard
// (ReplayGuard), the in-flight run marker that turns a run cut short by a
// crash into a "failed" event after the next boot (Inflight), and the
// systemd notify protocol and watchdog (Notifier, Watchdog).
//
// The daemon loop wires these to the transport, loadgen and probe packages:
// for each command it checks the signature (CheckSignature), the replay
// guard (ReplayGuard.Check), then the policy (Policy.Check), and dials only
// the addresses in the returned Target.
package agent
