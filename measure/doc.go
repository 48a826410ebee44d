// Package measure owns a measurement: it runs a load test (loadgen) while
// the probe records the machine over the same window, repeats it, and
// turns the runs into the wire result a device sends. `edgebench run`,
// `edgebench ab`, `edgebench wrk` and the agent all measure through it.
//
//	runs, err := measure.Repeat(ctx, measure.Test{Load: cfg, Repeat: 3})
//	res := measure.NewResult(measure.Origin{...})      // who, when, answering what
//	res.Spec = measure.SpecOf(cfg, 3, time.Second, nil) // what was asked
//	measure.AddRuns(res, runs)                          // the runs, their spread, warnings, fingerprint
//	measure.Finish(res, stop, measure.NoSuccess(runs))  // how it ended, in the one text of each ending
//
// Each Run holds the load generator's report.LoadResult and the probe's
// machine.Report: the caller prints them (report.WriteText, WriteAB,
// WriteWrk; Report.WriteText for the System section) before they are
// mapped onto the wire. The mapping lives here, with the producer
// (FromRun, FromSystem, SpecOf, RepeatOf, DeviceInfo, FingerprintOf); the
// collector maps the wire back for its reports.
package measure
