// Package capacity finds the highest open-loop rate a server sustains
// under a service level objective (SLO), as a pure state machine: Search
// says which trial to run next (a rate, a warm-up and a measured window),
// takes what the trial observed, and ends with the answer. It keeps no
// clock and opens no socket; cmd/edgebench and the agent run its trials
// with loadgen's open-loop engine, its tests against simulated servers.
//
//   - slo.go: the SLO ("p99<50ms,errors<0.1%"), ParseSLO.
//   - observe.go: what a trial measured (Observation, FromLoad, FromRun),
//     and how it is judged (Judge: goodput, the share of requests inside
//     the objective). Whether the generator, not the server, limited a
//     trial is not decided here: it is the run verdict's rule
//     (verdict.GeneratorBound), which FromRun applies to the trial's run
//     and the Observation carries (Generator), so that the search and the
//     trial's verdict never disagree.
//   - search.go: the search (Search, Config, Result): an exponential
//     ramp, a bisection to a relative tolerance, a longer final trial,
//     disagreements measured again.
package capacity
