// Package broker is the collector's embedded MQTT broker (mochi) and who
// may use it: the accounts file (Accounts, LoadAccounts), the ACL that
// confines each device to its own topics, the login gate that bounds
// what clients that have not logged in yet may cost (gate.go), the
// throttle of password logins (logins.go), and each device's quota of
// what it may make the collector store, which the ingest checks
// (Quota, Quotas).
//
// The broker counts its refusals in the counter it is given
// (Config.Refused); it imports none of the collector's other packages.
package broker
