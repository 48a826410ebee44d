# bash completion for edgebench. Generated from its flags by 'make docs': do not edit.
_edgebench() {
	local cur=${COMP_WORDS[COMP_CWORD]} words
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W 'run ab wrk capacity serve probe agent info version help' -- "$cur"))
		return
	fi
	case ${COMP_WORDS[1]} in
	run) words='--connections -c --requests -n --duration -d --max-time --threads -t --keepalive -k --no-keepalive --header -H --method -m --body --timeout --rate --warmup --repeat --repeat-rsd --repeat-max --repeat-budget --label --format --latency --quiet -q --length-check --no-length-check --no-probe --no-system --watch --probe-interval --probe-root --publish --broker --fleet --device --topic-prefix --spool --username --password --ca --cert --key --agent-config --publish-timeout --cacert --insecure --no-tls-resume --tls-version --h2 --h2c --streams --max-concurrent-streams --help' ;;
	ab) words='--requests -n --concurrency -c --timelimit -t --timeout -s --max-time --keepalive -k --header -H --cookie -C --auth -A --proxy-auth -P --method -m --head -i --postfile -p --putfile -u --content-type -T --variable-length -l --receive-errors-ok -r --quiet -q --verbosity -v --csv -e --gnuplot -g --no-confidence -S --no-percentiles -d --version -V --protocol -f --no-sni -I --label --repeat --format --no-system --no-probe --watch --publish --broker --fleet --device --topic-prefix --spool --username --password --ca --cert --key --agent-config --publish-timeout --cacert --insecure --no-tls-resume --tls-version --help' ;;
	wrk) words='--connections -c --duration -d --threads -t --header -H --latency --timeout --version -v --label --repeat --format --no-system --no-probe --watch --publish --broker --fleet --device --topic-prefix --spool --username --password --ca --cert --key --agent-config --publish-timeout --cacert --insecure --no-tls-resume --tls-version --help' ;;
	capacity) words='--slo --start --max-rate --min-rate --growth --tolerance --warmup --trial --final --budget --max-trials --connections -c --threads -t --keepalive -k --header -H --method -m --timeout --watch --probe-root --format --quiet -q --cacert --insecure --no-tls-resume --tls-version --h2 --h2c --streams --max-concurrent-streams --help' ;;
	serve) words='--addr --dir --help' ;;
	probe) words='--interval --count --root --format --once --watch --help' ;;
	agent) words='--config --probe-root --broker-ca-file --broker-cert-file --broker-key-file --broker-password --broker-password-file --broker-url --broker-username --device-id --fleet --heartbeat-interval --labels --log-level --policy-allow --policy-fleet-file --policy-max-body-bytes --policy-max-connections --policy-max-duration --policy-max-header-bytes --policy-max-headers --policy-max-rate --policy-max-repeat --policy-max-requests --policy-max-serve-duration --policy-max-watch-duration --policy-serve-allow --policy-serve-root --queue-size --signing-ed25519-public-key-file --signing-hmac-key-file --signing-require-signature --spool-dir --spool-max-bytes --spool-max-count --state-dir --topic-prefix --help' ;;
	info) words='--format --root --help' ;;
	help) words='run ab wrk capacity serve probe agent info version' ;;
	esac
	if [[ $cur == -* || ${COMP_WORDS[1]} == help ]]; then
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _edgebench edgebench
