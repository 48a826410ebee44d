// Package join makes the result of a run across two devices from the
// results of its two devices: the loader's (a load test or a capacity
// search, one run per repetition or the final trial) and the target's
// watch (one run per window the collector marked, Window.Run naming the
// loader's run). The joined result is the target's: its id, device,
// fingerprint and machine (each run's System); the loader's load figures,
// its machine (Run.Loader) and its fingerprint (Result.Loader); each
// run's verdict is verdict.JudgeTwo of both. It is pure: no store, no
// clock.
package join
