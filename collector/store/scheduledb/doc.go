// Package scheduledb keeps the fleet's tables over time in the store's
// database: the schedules (Schedule: checked, with their limits, and
// their next firing), each firing claimed once among the collectors and
// its record (ScheduleRun), and the alerts raised, each claimed once
// (ClaimAlert).
package scheduledb
