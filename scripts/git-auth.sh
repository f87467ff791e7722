# shellcheck shell=bash
# Sourced by the steps that push (publish-records.sh, update-readme.sh): let git
# authenticate to github.com with GH_TOKEN through an environment-only config
# entry (what actions/checkout would persist to .git/config, which we refuse
# with persist-credentials: false). The token never appears in a command line,
# a remote URL or a file. Without GH_TOKEN (local runs) nothing changes.
if [[ -n "${GH_TOKEN:-}" ]]; then
  _basic="$(printf 'x-access-token:%s' "$GH_TOKEN" | base64 | tr -d '\n')"
  # The token itself is masked by the runner; its base64 form is not.
  [[ -n "${GITHUB_ACTIONS:-}" ]] && echo "::add-mask::$_basic"
  export GIT_CONFIG_COUNT=1
  export GIT_CONFIG_KEY_0="http.https://github.com/.extraheader"
  export GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $_basic"
  unset _basic
fi
