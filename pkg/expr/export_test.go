package expr

// SetCallTimeLimit sets the per-call time limit for a test and returns what restores it.
var SetCallTimeLimit = setCallTimeLimit
