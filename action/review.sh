#!/usr/bin/env bash
# The review step of the sot GitHub Action (action.yml), also usable from
# any CI: it reviews BASE...HEAD (re-reviewing only what came after the
# last review with --since), writes the synthesis to the job summary and
# the verdict to the step's outputs, and exits non-zero unless the review
# passed. A partial review (exit 3: a specialist or step failed, a budget
# was reached, or every file was skipped) fails unless INPUT_ALLOW_PARTIAL
# is true, and then the summary's first line says so.
#
# Inputs come as INPUT_* variables (see action.yml); GITHUB_STEP_SUMMARY
# and GITHUB_OUTPUT are files the runner reads afterwards.
set -uo pipefail

sot="${SOT_BIN:-sot}"
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
output="${GITHUB_OUTPUT:-/dev/null}"
base="${INPUT_BASE:-}"
head="${INPUT_HEAD:-}"
if [ -z "$base" ] || [ -z "$head" ]; then
  echo "::error::no base or head commit: run on pull_request events, or give the base and head inputs"
  echo "verdict=failed" >> "$output"
  exit 2
fi
dir=".sot/reviews/ci-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}"

args=(review --diff "$base...$head" --output-dir "$dir" --interactive false --format json --format sarif)
[ -n "${INPUT_SINCE:-}" ] && [ "${INPUT_SINCE}" != "none" ] && args+=(--since "$INPUT_SINCE")
[ -n "${INPUT_SPECIALISTS:-}" ] && args+=(--specialists "$INPUT_SPECIALISTS")
[ -n "${INPUT_PERSPECTIVES:-}" ] && args+=(--perspectives "$INPUT_PERSPECTIVES")
[ -n "${INPUT_INTERACTION_MODE:-}" ] && args+=(--interaction-mode "$INPUT_INTERACTION_MODE")
[ -n "${INPUT_FAIL_ON:-}" ] && args+=(--fail-on "$INPUT_FAIL_ON")
[ -n "${INPUT_MODEL:-}" ] && args+=(--model "$INPUT_MODEL")
[ "${INPUT_MAX_COST:-0}" != "0" ] && args+=(--max-cost "$INPUT_MAX_COST")
[ "${INPUT_MAX_CALLS:-0}" != "0" ] && args+=(--max-calls "$INPUT_MAX_CALLS")
[ "${INPUT_MAX_TOKENS:-0}" != "0" ] && args+=(--max-tokens "$INPUT_MAX_TOKENS")
if [ -n "${INPUT_ARGS:-}" ]; then
  read -r -a extra <<< "$INPUT_ARGS"
  args+=("${extra[@]}")
fi

log="$(mktemp)"
"$sot" "${args[@]}" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}

synthesis="$dir/REVIEW-SYNTHESIS.md"
sarif="$dir/review.sarif"
[ -f "$synthesis" ] || synthesis=""
[ -f "$sarif" ] || sarif=""
said="$(grep '^sot: ' "$log" | tail -n 1 | sed 's/^sot: //')"

allow="${INPUT_ALLOW_PARTIAL:-false}"
case "$code" in
  0)
    if grep -q '^sot: no changes to review' "$log"; then
      verdict=no-changes
      first="**sot review: nothing new to review.** No commit changed the pull request's files since the last review; its findings stand."
    else
      verdict=passed
      first="**sot review passed.** No finding at or above ${INPUT_FAIL_ON:-the gate}."
    fi ;;
  1)
    verdict=failed
    first="**sot review failed.** ${said:-Findings at or above ${INPUT_FAIL_ON:-the gate}, or no specialist call succeeded.}" ;;
  3)
    if [ "$allow" = "true" ]; then
      verdict=partial-allowed
      first="**Partial review, allowed by allow-partial: this change was not fully reviewed.** ${said}"
    else
      verdict=partial
      first="**sot review is partial, so the check fails: this change was not fully reviewed.** ${said} (allow-partial: true lets a partial review pass.)"
    fi ;;
  2)
    verdict=failed
    first="**sot review could not start (usage error).** ${said}" ;;
  *)
    verdict=failed
    first="**sot review stopped (exit $code).** ${said}" ;;
esac

{
  echo "$first"
  echo
  if grep -q 'skipped' "$log" && [ "$code" = "3" ]; then
    echo "Skipped files:"
    echo
    grep '^  - ' "$log" || true
    echo
  fi
  if [ -n "$synthesis" ]; then
    cat "$synthesis"
  fi
} >> "$summary"

{
  echo "exit-code=$code"
  echo "verdict=$verdict"
  echo "synthesis=$synthesis"
  echo "sarif=$sarif"
} >> "$output"

case "$verdict" in
  passed|no-changes|partial-allowed) exit 0 ;;
esac
exit "$(( code == 0 ? 1 : code ))"
