// Package cron reads five-field cron expressions ("30 2 * * *") and
// finds the next minute each one is due, in UTC: the times of a schedule
// given with --cron.
package cron
