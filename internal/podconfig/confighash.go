package podconfig

// A route's config hash names what its pods run (the QueryRoute's
// status.configHash, also the pod template's ragroute.io/config-hash
// annotation). The operator hands it to each route pod in EnvConfigHash;
// the route sends it back on every API answer in ConfigHashHeader; and a
// RouteEvaluation's run, given the hash it measures, scores only answers
// from pods that run it. During a roll, and for a few seconds after it (a
// stopping pod serves on while the Service's endpoints catch up), pods of
// the old config still answer.
const (
	EnvConfigHash    = "RAGROUTE_CONFIG_HASH"
	ConfigHashHeader = "Ragroute-Config-Hash"
)
