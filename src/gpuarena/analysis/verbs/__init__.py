"""The verbs: compare, cost, check, advise, expected figures, doctor and fleet, endpoints and
frontiers.  Each a function of stored rows and the physics, returning data; report/text/ formats it."""
