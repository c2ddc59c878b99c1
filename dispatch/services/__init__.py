"""Dispatch services by sub-domain: the policy, drivers' zones, planning and moves."""
