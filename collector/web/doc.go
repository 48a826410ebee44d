// Package web is the collector's web UI: the fleet page with each
// device's last result, a run's page with its charts and the device's
// report, the comparison page, the changes page and the schedules page,
// rendered on the server from the templates here (*.html) with chart.js
// drawing their charts; and what guards them and the API: the Host
// header against DNS rebinding (AllowHosts) and the API token
// (RequireToken). The pages read the store through Store; the collector
// mounts them with its API.
package web
