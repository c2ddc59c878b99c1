"""The one small interface between a dispatch plan and the VRPTW solver behind it.

A plan builds a `Problem` (integer seconds and metres, locations by index into the matrices),
`solve` answers a `Solution`. Nothing here knows Django; another solver replaces the one behind
`solve` (today PyVRP, `dispatch.pyvrp_solver`) without the planner changing.
"""

from dispatch.pyvrp_solver import solve
from dispatch.vrp import Job, JobKind, Problem, Route, Solution, Vehicle

__all__ = ["Job", "JobKind", "Problem", "Route", "Solution", "Vehicle", "solve"]
