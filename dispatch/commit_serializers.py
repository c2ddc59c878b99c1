"""Answers of committing a plan (contract "Dispatch", "Commit")."""

from rest_framework import serializers

from dispatch.serializers import PlanOutput
from dispatch.services.committing import SkipReason


class SkippedOutput(serializers.Serializer):
    orderId = serializers.UUIDField(source="order_id")
    reason = serializers.ChoiceField(choices=SkipReason.ALL)


class PlanCommitOutput(serializers.Serializer):
    """`{plan, assigned, skipped}`: the committed plan, how many of its orders are assigned on its
    routes, and each order skipped with why."""

    plan = PlanOutput()
    assigned = serializers.IntegerField()
    skipped = SkippedOutput(many=True)
