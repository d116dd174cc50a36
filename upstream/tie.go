package upstream

// RandomFinalTie: upstream's pickOneNodeForPreemption ranges over a map, so
// among candidates equal on all five criteria its pick is random.
func (Impl) RandomFinalTie() bool { return true }
