// Package schedules is the scheduler: each firing of a schedule of the
// store that falls due is claimed once among the collectors sharing the
// store (Store.ClaimRun), then fired as an ordinary trigger labelled
// schedule=NAME, or with a jitter as one trigger per online device at a
// random moment of the window; devices offline or busy are recorded as
// missed. The schedules themselves, their checks and their SQL are the
// store's (scheduledb.Schedule).
package schedules
