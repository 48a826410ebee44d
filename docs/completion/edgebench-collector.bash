# bash completion for edgebench-collector. Generated from its flags by 'make docs': do not edit.
_edgebench_collector() {
	local cur=${COMP_WORDS[COMP_CWORD]} words
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W 'serve trigger cancel schedule changes rebuild-series devices runs show compare export version help' -- "$cur"))
		return
	fi
	case ${COMP_WORDS[1]} in
	serve) words='--config --password --accounts --alert-webhook --alerts-backoff --alerts-interval --alerts-queue-len --alerts-quiet --alerts-retries --alerts-spool-max --api-token-file --broker --ca --db --db-password-file --ingest-batch-max --ingest-queue-len --ingest-workers --keep --keep-samples --limits-log-every --limits-login-wait --limits-pending --limits-per-source --limits-silent --listen --log-level --max-schedules --metrics-token-file --prefix --schedule-max-jitter --schedule-min-every --share --sign-ed25519-key-file --sign-hmac-key-file --tls-cert --tls-client-ca --tls-key --username --web --web-host --web-max-expensive --help' ;;
	trigger) words='--server --api-token-file --device --fleet --select --target-device --target-fleet --watch --addr --dir --connections -c --requests -n --duration -d --threads -t --keepalive -k --no-keepalive --header -H --method -m --body --timeout --rate --warmup --repeat --repeat-rsd --repeat-max --repeat-budget --label --queue --ttl --wait --max-wait --cacert --insecure --no-tls-resume --tls-version --h2 --h2c --streams --max-concurrent-streams --slo --start --max-rate --tolerance --trial --final --budget --help' ;;
	cancel) words='--server --api-token-file --help' ;;
	schedule) words='' ;;
	changes) words='--db --db-password-file --fleet --device --since --min-pct --limit --cursor --final --json --help' ;;
	rebuild-series) words='--db --db-password-file --min-pct --min-noise --alpha --window --min-before --max-before --min-after --restart --help' ;;
	devices) words='--db --db-password-file --format --json --addresses --fleet --limit --after --help' ;;
	runs) words='--db --db-password-file --fleet --device --cmd --label --since --exclude-throttled --exclude-invalid --limit --before --format --help' ;;
	show) words='--db --db-password-file --format --run --help' ;;
	compare) words='--db --db-password-file --fleet --device --cmd --label --since --exclude-throttled --exclude-invalid --by --metric --base --format --columns --same-path --max-runs --help' ;;
	export) words='--db --db-password-file --fleet --device --cmd --label --since --exclude-throttled --exclude-invalid --format --help' ;;
	help) words='serve trigger cancel schedule changes rebuild-series devices runs show compare export version' ;;
	esac
	if [[ $cur == -* || ${COMP_WORDS[1]} == help ]]; then
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _edgebench_collector edgebench-collector
